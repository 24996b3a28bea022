import EntitlementCore

/// What the notification receiver and the catch-up need from a database: record notifications
/// and apply them, in one transaction with the row changes and audit rows they cause, so Apple
/// hears 200 only for what is durable. Support reads them back through ``SubscriberDirectory``.
public protocol NotificationInbox: Sendable {
    /// Records each notification in `app_store_notifications` and applies it to the row owning
    /// its chain — or, when none does, to the row without a chain whose `app_account_token` is the
    /// notification's — in order, all in one transaction. A notification recorded before is a
    /// `duplicate` and changes nothing, unless it was `unmatched`: that one is tried again.
    /// Returns each one's outcome, in order. Throws ``StoreError`` when the database could not be
    /// written; a notification's own error (a constraint, a value a column cannot hold) comes out as
    /// the database gave it, for the caller to receive each notification alone.
    func receive(_ notifications: [ReceivedNotification], ingest: NotificationIngest, nowMs: Int64) async throws -> [NotificationOutcome]

    /// Unmatched notifications that a row now links by its `app_account_token` (the web service
    /// enrolled it after Apple's notification came), oldest first: their ids and signed payloads,
    /// to verify again and receive again.
    func waitingForAdoption(limit: Int) async throws -> [(id: String, signedPayload: String)]

    /// Up to when Apple's notification history of `environment` has been read (nil: never).
    func historyCheckpoint(_ environment: AppStoreEnvironment) async throws -> Int64?

    /// Records that the history of `environment` has been read from `readFromMs` through
    /// `throughMs`, and returns where the gapless reading that ends there began (`covered_from`):
    /// it carries on while each reading starts no later than the previous one ended.
    @discardableResult
    func setHistoryCheckpoint(_ environment: AppStoreEnvironment, readFromMs: Int64, throughMs: Int64, nowMs: Int64) async throws -> Int64
}
