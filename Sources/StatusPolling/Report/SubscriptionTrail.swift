/// What the report reads from a store: the audit trail in `id` order, a page of ids at a time, so
/// one pass holds a few pages of it and never the whole table, the run history (`report`
/// charts the runs; `runs` lists them), and the ledger's sums. Pages are ranges of ids (not "the next N after the
/// last"), so several can be read at once while one is counted.
public protocol SubscriptionTrail: Sendable {
    /// The trail rows whose ids lie in `ids`, in `id` order.
    func trailEvents(in ids: Range<Int64>) async throws -> [TrailEvent]
    /// The lowest and highest id of the trail now; nil when it is empty. Rows appended later are
    /// not read (the report is of the trail as it was when it started).
    func trailEventIDs() async throws -> ClosedRange<Int64>?

    /// The run history, the newest runs first.
    func runs(last count: Int) async throws -> [RunRecord]

    /// The ledger's money before `toMs` in `environment` (nil: both), summed by the database by
    /// day: the report holds totals, never the ledger. Needs no start, so it runs beside the
    /// trail's pass.
    func revenueSums(toMs: Int64, environment: String?) async throws -> RevenueReport.Sums
}
