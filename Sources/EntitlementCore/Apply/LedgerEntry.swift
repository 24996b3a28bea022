/// One transaction for the ledger (`subscription_transactions`, one row per Apple transaction id),
/// as the answer that brought it shows it, with when that was true and who brought it. The store
/// merges it into what the ledger holds by its ``Precedence``: facts once known stay (a poorer
/// source never erases a price), what Apple may change later (expiry, revocation, upgrade) comes
/// from the newest data, and an entry that changes nothing writes nothing.
public struct LedgerEntry: Sendable, Equatable {
    /// How the entry's changeable values weigh against the ledger's.
    public enum Precedence: Sendable, CaseIterable {
        /// Apple's data as of `asOfMs`: it replaces the ledger's when newer, and then moves the
        /// ledger's as-of even if nothing else changes, so that a message signed in between and
        /// delivered late is known to be older.
        case newerWins
        /// The row has just taken this answer for its current transaction and keeps its as-of
        /// (`transaction_signed_at`): the ledger is written only where a value changes — the poll's
        /// nightly re-asking of an unchanged subscription costs no ledger write.
        case heldByRow
        /// Older than what the row holds of this transaction: it only fills facts the ledger lacks.
        case factsOnly
    }

    public var transaction: SubscriptionTransaction
    /// The row owning the transaction's chain; nil until a discovered chain's row is enrolled.
    public var subscriptionID: Int64?
    /// The transaction's environment, or the answer's.
    public var environment: String?
    /// When Apple's data was true: a signed payload's `signedDate`, or when Apple was asked.
    public var asOfMs: Int64
    public var source: LedgerSource
    /// When the answer was written (the run's clock), ms.
    public var atMs: Int64
    public var precedence: Precedence
    /// The row recovered from billing retry (or its grace period) with this transaction: the
    /// report's money recovered, read with the sales in one pass over the ledger.
    public var endsBillingRetry = false

    public init(
        transaction: SubscriptionTransaction, subscriptionID: Int64?, environment: String?, asOfMs: Int64, source: LedgerSource, atMs: Int64,
        precedence: Precedence
    ) {
        self.transaction = transaction
        self.subscriptionID = subscriptionID
        self.environment = environment
        self.asOfMs = asOfMs
        self.source = source
        self.atMs = atMs
        self.precedence = precedence
    }

    /// Apple's transaction id and chain: a transaction without both cannot be a ledger row.
    public var key: (transactionID: String, chain: String)? {
        guard let id = transaction.transactionID, !id.isEmpty, let chain = transaction.originalTransactionID, !chain.isEmpty else { return nil }
        return (id, chain)
    }
}
