/// The SQL of work shared by several workers (``SQLStore/workShare``; PostgreSQL's): the
/// nights and backfills they share, the leases on rows, and how many are left.
public enum WorkSharingSQL {
    /// How many times a row of a night or a backfill is leased at most: enough for two workers
    /// to die holding it and a third to finish it; a row still not written is left to the next night.
    public static let maximumLeases = 3

    /// How far apart (run clock) two nightly runs may start and still share a night: cron on
    /// several hosts starts them within seconds; the next night is a day later.
    public static let nightSpan: Int64 = 12 * 3600 * 1000

    /// The advisory lock that makes opening a night atomic, apart from every worker's and `migrate`'s.
    static let nightLock: SQLStatement = "SELECT pg_advisory_xact_lock(\(Int64(0x5354_4154_5553_0002)))"

    /// The latest other night that started within ``nightSpan`` of `nowMs` and has rows not done.
    static func openNight(runID: Int64, nowMs: Int64) -> SQLStatement {
        """
        SELECT r.id FROM poll_runs r
        WHERE r.mode = 'nightly' AND r.work_id = r.id AND r.id <> \(runID)
            AND r.run_clock BETWEEN \(nowMs - nightSpan) AND \(nowMs + nightSpan)
            AND EXISTS (SELECT 1 FROM work_targets t WHERE t.work_id = r.id AND NOT t.done)
        ORDER BY r.id DESC LIMIT 1
        """
    }

    /// Makes `runID` a run of the work `workID` (its own, or a night another worker opened).
    static func join(_ runID: Int64, work workID: Int64) -> SQLStatement {
        "UPDATE poll_runs SET work_id = \(workID) WHERE id = \(runID)"
    }

    /// Opens night `runID` with the rows due at `nowMs` not fresh; its one row: how many were fresh.
    static func openNight(_ runID: Int64, windows: SelectionWindows, nowMs: Int64) -> SQLStatement {
        """
        WITH due AS (\(unescaped: DueSelectionSQL.nightlyPostgres(windows, nowMs: nowMs))),
            targets AS (INSERT INTO work_targets (work_id, subscription_id) SELECT \(runID), id FROM due WHERE fresh = 0)
        SELECT count(*) FROM due WHERE fresh = 1
        """
    }

    /// The work of run `runID`.
    static func work(of runID: Int64) -> SQLStatement {
        "SELECT work_id FROM poll_runs WHERE id = \(runID)"
    }

    /// Rows of the work not done whose subscription still exists: one the web service deleted
    /// since the night was fixed can never be leased, and must not keep workers waiting.
    static func remaining(work workID: Int64) -> SQLStatement {
        """
        SELECT count(*) FROM work_targets t
        WHERE t.work_id = \(workID) AND NOT t.done AND t.leases < \(maximumLeases)
            AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = t.subscription_id)
        """
    }

    /// Records the count of rows left on run `runID`.
    static func setTargets(_ runID: Int64, _ count: Int) -> SQLStatement {
        "UPDATE poll_runs SET targets = \(count) WHERE id = \(runID)"
    }

    /// The lease's joins are nested loops from the night's pending index, whatever the statistics:
    /// once autovacuum has analysed a large night, the planner otherwise merges it with
    /// `subscriptions` walked from its first id — 260,000 rows read for 64 leased, 100 ms a lease
    /// instead of a few (seen in the bench's one-worker night). Local to the lease's transaction.
    public static let leasePlanSettings: [SQLStatement] = ["SET LOCAL enable_mergejoin = off", "SET LOCAL enable_hashjoin = off"]

    /// Picks up to `limit` free rows of the run's work after `after` in id order, locks them in
    /// both tables (`SKIP LOCKED`), counts the lease on the night's row and writes it on the
    /// subscription's; returns the leased rows (``SubscriptionRowSQL/row(_:)``). Free: never
    /// leased, expired, or left by an earlier run of this same worker (the worker lock says that
    /// run is dead). The night's row is locked too: a row another worker's write released and
    /// marked done while this query ran is then re-read as done, not leased again.
    public static func lease(runID: Int64, worker: String, limit: Int, after: Int64, leaseMs: Int64) -> SQLStatement {
        """
        WITH work AS (SELECT work_id FROM poll_runs WHERE id = \(runID)),
        picked AS (
            SELECT s.id FROM work_targets t JOIN subscriptions s ON s.id = t.subscription_id
            WHERE t.work_id = (SELECT work_id FROM work) AND t.subscription_id > \(after) AND s.id > \(after)
                AND NOT t.done AND t.leases < \(maximumLeases)
                AND (s.lease_run IS NULL OR s.lease_expires_at < now() OR (s.lease_owner = \(worker) AND s.lease_run <> \(runID)))
            ORDER BY t.subscription_id
            LIMIT \(limit)
            FOR UPDATE OF s, t SKIP LOCKED
        ),
        counted AS (
            UPDATE work_targets SET leases = leases + 1
            WHERE work_id = (SELECT work_id FROM work) AND subscription_id IN (SELECT id FROM picked)
        )
        UPDATE subscriptions s SET lease_owner = \(worker), lease_run = \(runID), lease_expires_at = \(unescaped: expiry(leaseMs))
        FROM picked WHERE s.id = picked.id
        RETURNING \(unescaped: SubscriptionRowSQL.columns.split(separator: ",").map { "s." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
        """
    }

    /// Extends the leases run `runID` still holds on `ids`; their ids.
    static func renew(runID: Int64, ids: [Int64], leaseMs: Int64) -> SQLStatement {
        "UPDATE subscriptions SET lease_expires_at = \(unescaped: expiry(leaseMs)) WHERE id IN (\(list: ids)) AND lease_run = \(runID) RETURNING id"
    }

    /// When a lease of `ms` taken now ends (the database's clock: every worker's is the same).
    private static func expiry(_ ms: Int64) -> String {
        "now() + make_interval(secs => \(Double(ms) / 1000))"
    }

    /// Releases the leases run `runID` still holds — all of them (rows it leased but did not
    /// start, after a stop), or those of `ids` — so other workers take them at once.
    public static func releaseLeases(of runID: Int64, ids: [Int64]? = nil) -> SQLStatement {
        let only: SQLStatement = ids.map { " AND id IN (\(list: $0))" } ?? ""
        return "UPDATE subscriptions SET lease_owner = NULL, lease_run = NULL, lease_expires_at = NULL WHERE lease_run = \(runID)\(only)"
    }
}
