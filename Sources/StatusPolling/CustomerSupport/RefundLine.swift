import AppStoreBackends

/// One refund Apple reports, whether the row that owns its chain shows it, and what the ledger
/// holds of it (who saw it first: the answer to "did we already know?" without asking Apple again).
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
    /// The ledger's record of the refunded transaction; nil when the ledger does not hold it (a
    /// chain no answer has brought since the ledger began).
    public var ledger: LedgerRecord?
}
