/// One change of a row's contract columns, from the audit trail.
public struct SubscriptionEvent: Sendable, Equatable {
    public var id: Int64
    public var subscriptionID: Int64
    public var userID: String
    public var runID: Int64?
    /// The run's clock when the change was written, ms.
    public var atMs: Int64
    /// A `SubscriptionTransition` name, or `conflict`.
    public var reason: String
    public var appleStatus: Int?
    /// The backend that answered `appleStatus` (`verifyReceipt`, `serverAPI`); nil before v4.
    public var statusBackend: String?
    public var entitlementBefore: String
    public var entitlementAfter: String
    public var old: SubscriptionState
    public var new: SubscriptionState

    public init(id: Int64, subscriptionID: Int64, userID: String, runID: Int64?, atMs: Int64, reason: String, appleStatus: Int?, entitlementBefore: String, entitlementAfter: String, old: SubscriptionState, new: SubscriptionState, statusBackend: String? = nil) {
        self.statusBackend = statusBackend
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
