import AppStoreBackends

/// One refund Apple reports, and whether the row that owns its chain shows it.
public struct RefundLine: Sendable {
    /// How the row stands towards the refund.
    public enum Reflection: String, Sendable {
        /// The refunded period is the row's current one and `cancelled_at` holds the refund.
        case reflected
        /// The refunded period is the row's current one but `cancelled_at` is empty: the next run
        /// (or a notification) writes it.
        case notYet = "not_yet"
        /// An earlier period: the row's access is another period's, and nothing is to be taken back.
        case earlierPeriod = "earlier_period"
        /// No row owns the chain.
        case noRow = "no_row"
    }

    public var transaction: VerifiedTransaction
    public var subscriptionID: Int64?
    public var reflection: Reflection
}
