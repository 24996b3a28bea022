import EntitlementCore

/// A store that several workers share (PostgreSQL): instead of listing its due rows once, a run
/// leases them a batch at a time, so each row goes to one worker. A lease is an owner and an
/// expiry on the row: the write of a result releases it in the same transaction, and a worker that
/// dies leaves rows that become due again when their lease expires.
///
/// A recorded run (one with a run id) of such a store leases; a dry run only lists, as on SQLite.
public protocol LeasingStore: SubscriptionStore {
    /// How long a lease lasts: a row is handed to the pipeline only while at least half of it is left.
    var leaseDuration: Duration { get }

    /// Joins the run to its shared work and returns how many of its rows are not done yet. A
    /// nightly run joins the night other workers are working on, or opens one with the rows due
    /// at `nowMs` (and then says how many it left out as fresh); a backfill's run works on that
    /// backfill's targets.
    func joinWork(runID: Int64, selection: RowSelection, nowMs: Int64) async throws -> JoinedWork

    /// Rows of the run's work not done yet, leased or not.
    func remainingWork(runID: Int64) async throws -> Int

    /// Leases up to `limit` rows of the run's work that are not done and not leased by another
    /// live run, in `id` order; empty when none is free now. Rows after `after` first: a worker
    /// leases in `id` order, so the rows before its last lease, done by then, are not walked again
    /// on every lease; only when those are too few does it look from the start.
    func lease(runID: Int64, limit: Int, after: Int64) async throws -> [SubscriptionRow]

    /// Extends the run's leases on `ids`; returns the ids the run still holds (a lease that expired
    /// may have gone to another worker, which then verifies that row).
    func renewLeases(runID: Int64, ids: [Int64]) async throws -> Set<Int64>
}
