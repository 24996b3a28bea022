import EntitlementCore

/// One row of the audit trail (`subscription_events`) as the report reads it: which subscription,
/// when (the writer's clock), why, who brought it, and the report's columns after it (those before
/// are the row's after its previous event, which the report keeps).
public struct TrailEvent: Sendable, Equatable {
    public var id: Int64
    public var subscriptionID: Int64
    /// `at`: the run's clock, or a notification's arrival, ms.
    public var atMs: Int64
    /// `reason`: an ``AuditReason``'s raw value.
    public var reason: String
    /// The subscription's environment (`Production`, `Sandbox`): the new columns', else the old.
    public var environment: String?
    /// `source`: ``Provenance/source`` (poll, backfill, notification), nil for rows written before it was kept.
    public var source: String?
    /// For a change a notification brought: when Apple's data in it was true (its signedDate), ms.
    /// `atMs - notifiedAtMs` is how long Apple's news took to reach the row.
    public var notifiedAtMs: Int64?
    public var new: TrailState
    /// `revoked_at`: for a refund of a period other than the row's (`refunded_earlier_period`),
    /// when Apple refunded it, ms.
    public var revokedAtMs: Int64?

    public init(
        id: Int64, subscriptionID: Int64, atMs: Int64, reason: String, environment: String?, source: String? = nil, notifiedAtMs: Int64? = nil,
        new: TrailState, revokedAtMs: Int64? = nil
    ) {
        self.id = id
        self.subscriptionID = subscriptionID
        self.atMs = atMs
        self.reason = reason
        self.environment = environment
        self.source = source
        self.notifiedAtMs = notifiedAtMs
        self.new = new
        self.revokedAtMs = revokedAtMs
    }

    /// An event of a whole row's columns (a hand-built trail).
    public init(
        id: Int64, subscriptionID: Int64, atMs: Int64, reason: String, source: String? = nil, notifiedAtMs: Int64? = nil, new: SubscriptionState
    ) {
        self.init(
            id: id, subscriptionID: subscriptionID, atMs: atMs, reason: reason, environment: new.environment, source: source,
            notifiedAtMs: notifiedAtMs, new: TrailState(new))
    }
}
