import EntitlementCore

/// One change of a row's contract columns, from the audit trail.
public struct SubscriptionEvent: Sendable, Equatable {
    public var id: Int64
    public var subscriptionID: Int64
    public var userID: String
    public var runID: Int64?
    /// The run's clock when the change was written, ms.
    public var atMs: Int64
    /// An `AuditReason` raw value (a `SubscriptionTransition` name, `conflict`, `discovered`, `stale`).
    public var reason: String
    public var appleStatus: Int?
    /// The backend that answered `appleStatus` (`verifyReceipt`, `serverAPI`); nil before v4.
    public var statusBackend: String?
    public var entitlementBefore: String
    public var entitlementAfter: String
    public var old: SubscriptionState
    public var new: SubscriptionState
    /// Who brought the answer (`Provenance.source`: poll, backfill, notification); nil before v7.
    public var source: String?
    /// The notification's id when one brought it.
    public var notificationID: String?

    public init(id: Int64, subscriptionID: Int64, userID: String, runID: Int64?, atMs: Int64, reason: String, appleStatus: Int?, entitlementBefore: String, entitlementAfter: String, old: SubscriptionState, new: SubscriptionState, statusBackend: String? = nil, source: String? = nil, notificationID: String? = nil) {
        self.statusBackend = statusBackend
        self.source = source
        self.notificationID = notificationID
        self.id = id
        self.subscriptionID = subscriptionID
        self.userID = userID
        self.runID = runID
        self.atMs = atMs
        self.reason = reason
        self.appleStatus = appleStatus
        self.entitlementBefore = entitlementBefore
        self.entitlementAfter = entitlementAfter
        self.old = old
        self.new = new
    }
}
