/// One row of the audit trail (`subscription_events`) as the report reads it: which subscription,
/// when (the writer's clock), why, and the contract columns before and after.
public struct TrailEvent: Sendable, Equatable {
    public var id: Int64
    public var subscriptionID: Int64
    /// `at`: the run's clock, or a notification's arrival, ms.
    public var atMs: Int64
    /// `reason`: an ``AuditReason``'s raw value.
    public var reason: String
    public var old: SubscriptionState
    public var new: SubscriptionState

    public init(id: Int64, subscriptionID: Int64, atMs: Int64, reason: String, old: SubscriptionState, new: SubscriptionState) {
        self.id = id
        self.subscriptionID = subscriptionID
        self.atMs = atMs
        self.reason = reason
        self.old = old
        self.new = new
    }

    /// The environment the subscription lives in (the new columns', else the old).
    public var environment: String? { new.environment ?? old.environment }
}
