/// What the run's pipeline needs from a database: the due rows, the rows themselves, and batched
/// writes of the results, with the run history beside them. The SQLite store implements it; a
/// PostgreSQL store shared by several workers implements the same without touching the run or the
/// decision.
public protocol SubscriptionStore: RunJournal {
    /// The ids of the rows a run covers, in `id` order, those up to `cursor` left out (a resumed
    /// backfill's checkpoint). Read from indexes only, once at the start of a run, so the cost
    /// follows the due rows and not the size of the table; the run then reads the rows in pages.
    func dueSubscriptionIDs(_ selection: RowSelection, nowMs: Int64, after cursor: Int64) async throws -> [Int64]

    /// The rows with these ids, in `id` order; a row deleted meanwhile is left out.
    func subscriptions(ids: [Int64]) async throws -> [SubscriptionRow]

    /// The row that owns `originalTransactionID`, if any: lets a dry run report conflicts.
    func subscriptionID(owning originalTransactionID: String) async throws -> Int64?

    /// Writes a batch of results in one transaction, in order, and the batch's checkpoint with them.
    /// A verified result writes the contract columns, the new receipt, the bookkeeping and an audit
    /// event when a contract column changed — unless the chain belongs to another row (an earlier
    /// result of the same batch included) or the receipt was replaced meanwhile. A failed result
    /// writes bookkeeping only. Returns, in order, what each verified result did (nil for a failure).
    func write(_ batch: ResultBatch) async throws -> [VerifiedWriteResult?]
}
