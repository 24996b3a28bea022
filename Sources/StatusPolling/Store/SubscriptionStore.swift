import EntitlementCore

/// What the run's pipeline needs from a database: the due rows, the rows themselves, and batched
/// writes of the results (``SubscriptionWriter``). The run history is its own protocol
/// (``RunJournal``), which the job uses around a run. The SQLite store implements it; a
/// PostgreSQL store shared by several workers implements the same without touching the run or the
/// decision, and hands the run its rows by lease (``rowSharing``).
public protocol SubscriptionStore: SubscriptionWriter {
    /// The ids of the rows a run covers, in `id` order, those up to `cursor` left out (a resumed
    /// backfill's checkpoint), and how many rows of the windows were left out as fresh. Read from
    /// indexes only, once at the start of a run, so the cost follows the due rows and not the size
    /// of the table; the run then reads the rows in pages.
    func dueSelection(_ selection: RowSelection, nowMs: Int64, after cursor: Int64) async throws -> DueSelection

    /// The rows with these ids, in `id` order; a row deleted meanwhile is left out.
    func subscriptions(ids: [Int64]) async throws -> [SubscriptionRow]

    /// How a recorded run takes its rows (``RowSharing/listed`` unless the store says otherwise).
    var rowSharing: RowSharing { get }
}

extension SubscriptionStore {
    public var rowSharing: RowSharing { .listed }

    /// The ids of ``dueSelection(_:nowMs:after:)``.
    public func dueSubscriptionIDs(_ selection: RowSelection, nowMs: Int64, after cursor: Int64) async throws -> [Int64] {
        try await dueSelection(selection, nowMs: nowMs, after: cursor).ids
    }
}
