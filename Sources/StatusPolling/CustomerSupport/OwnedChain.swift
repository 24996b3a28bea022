import EntitlementCore

/// A chain Apple named in a support answer, and the row that owns it here (if one does): its
/// columns, its bookkeeping and its recent audit trail, newest first.
public struct OwnedChain: Sendable {
    public var originalTransactionID: String
    public var row: SubscriptionRow?
    public var bookkeeping: SubscriptionBookkeeping?
    public var history: [SubscriptionEvent]
}
