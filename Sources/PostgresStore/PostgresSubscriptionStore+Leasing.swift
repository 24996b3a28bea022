import Foundation
import Logging
import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
    /// Workers share the work: a run leases its rows.
    public var rowSharing: RowSharing { .leased(self) }

    /// How far apart (run clock) two nightly runs may start and still share a night: cron on
    /// several hosts starts them within seconds; the next night is a day later.
    public static let nightSpan: Int64 = 12 * 3600 * 1000

    /// The advisory lock that makes opening a night atomic, apart from every worker's and `migrate`'s.
    static let nightLockKey: Int64 = 0x5354_4154_5553_0002

    /// A nightly run joins the latest night that started within ``nightSpan`` of its clock and has
    /// rows not done; otherwise it opens a night with the rows due at `nowMs`. Under an advisory
    /// lock, so workers starting together open one night between them.
    public func joinWork(runID: Int64, selection: RowSelection, nowMs: Int64) async throws -> JoinedWork {
        guard case .nightly(let windows) = selection else { return JoinedWork(remaining: try await remainingWork(runID: runID)) }
        return try await transaction { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.nightLockKey))", logger: logger)
            let open = try await connection.query("""
                SELECT r.id FROM poll_runs r
                WHERE r.mode = 'nightly' AND r.work_id = r.id AND r.id <> \(runID)
                    AND r.run_clock BETWEEN \(nowMs - Self.nightSpan) AND \(nowMs + Self.nightSpan)
                    AND EXISTS (SELECT 1 FROM work_targets t WHERE t.work_id = r.id AND NOT t.done)
                ORDER BY r.id DESC LIMIT 1
                """, logger: logger).decode(Int64.self).collect().first
            var skippedFresh = 0
            if let open {
                try await connection.query("UPDATE poll_runs SET work_id = \(open) WHERE id = \(runID)", logger: logger)
            } else {
                try await connection.query("UPDATE poll_runs SET work_id = id WHERE id = \(runID)", logger: logger)
                let due = Self.nightlyDueIDsSQL(windows, nowMs: nowMs)
                skippedFresh = try await Self.count(connection, PostgresQuery(unsafeSQL: """
                    WITH due AS (\(due)),
                        targets AS (INSERT INTO work_targets (work_id, subscription_id) SELECT \(runID), id FROM due WHERE NOT fresh)
                    SELECT count(*) FROM due WHERE fresh
                    """), logger: logger)
            }
            let remaining = try await Self.count(connection, Self.remainingSQL(workID: open ?? runID), logger: logger)
            try await connection.query("UPDATE poll_runs SET targets = \(remaining) WHERE id = \(runID)", logger: logger)
            return JoinedWork(remaining: remaining, skippedFresh: skippedFresh)
        }
    }

    public func remainingWork(runID: Int64) async throws -> Int {
        try await read { connection, logger in
            let workID = try await connection.query("SELECT work_id FROM poll_runs WHERE id = \(runID)", logger: logger).decode(Int64?.self).collect().first
            guard let workID = workID ?? nil else { return 0 }
            return try await Self.count(connection, Self.remainingSQL(workID: workID), logger: logger)
        }
    }

    /// Rows of the work not done whose subscription still exists: one the web service deleted
    /// since the night was fixed can never be leased, and must not keep workers waiting.
    static func remainingSQL(workID: Int64) -> PostgresQuery {
        """
        SELECT count(*) FROM work_targets t
        WHERE t.work_id = \(workID) AND NOT t.done AND t.leases < \(WorkSharingSQL.maximumLeases)
            AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = t.subscription_id)
        """
    }

    /// Leases rows of the run's work that are not done, not given up (``maximumLeases``), and whose
    /// lease is free: never leased, expired, or left by an earlier run of this same worker (the
    /// worker lock says that run is dead). `SKIP LOCKED` passes over rows another worker is leasing
    /// at this instant. The night's row is locked too: a row another worker's write released and
    /// marked done while this query ran is then re-read as done, not leased again.
    public func lease(runID: Int64, limit: Int, after: Int64) async throws -> [SubscriptionRow] {
        let rows = try await lease(runID: runID, limit: limit, from: after)
        guard rows.count < limit, after > 0 else { return rows }
        return (rows + (try await lease(runID: runID, limit: limit - rows.count, from: 0))).sorted { $0.id < $1.id }
    }

    private func lease(runID: Int64, limit: Int, from after: Int64) async throws -> [SubscriptionRow] {
        let query = Self.leaseSQL(runID: runID, worker: worker, limit: limit, after: after, seconds: leaseDuration.seconds)
        let rows = try await transaction { connection, logger in
            for setting in Self.leasePlanSettings { try await connection.query(setting, logger: logger) }
            return try await Self.rows(connection.query(query, logger: logger)) { reader in try SubscriptionRowSQL.row(&reader) }
        }
        return rows.sorted { $0.id < $1.id }
    }

    /// The lease's joins are nested loops from the night's pending index, whatever the statistics:
    /// once autovacuum has analysed a large night, the planner otherwise merges it with
    /// `subscriptions` walked from its first id — 260,000 rows read for 64 leased, 100 ms a lease
    /// instead of a few (seen in the bench's one-worker night). Local to the lease's transaction.
    static let leasePlanSettings: [PostgresQuery] = ["SET LOCAL enable_mergejoin = off", "SET LOCAL enable_hashjoin = off"]

    /// Picks up to `limit` free rows of the run's work after `after` in id order, locks them in
    /// both tables (`SKIP LOCKED`), counts the lease on the night's row and writes it on the
    /// subscription's; returns the leased rows.
    static func leaseSQL(runID: Int64, worker: String, limit: Int, after: Int64, seconds: Double) -> PostgresQuery {
        """
        WITH work AS (SELECT work_id FROM poll_runs WHERE id = \(runID)),
        picked AS (
            SELECT s.id FROM work_targets t JOIN subscriptions s ON s.id = t.subscription_id
            WHERE t.work_id = (SELECT work_id FROM work) AND t.subscription_id > \(after) AND s.id > \(after)
                AND NOT t.done AND t.leases < \(WorkSharingSQL.maximumLeases)
                AND (s.lease_run IS NULL OR s.lease_expires_at < now() OR (s.lease_owner = \(worker) AND s.lease_run <> \(runID)))
            ORDER BY t.subscription_id
            LIMIT \(limit)
            FOR UPDATE OF s, t SKIP LOCKED
        ),
        counted AS (
            UPDATE work_targets SET leases = leases + 1
            WHERE work_id = (SELECT work_id FROM work) AND subscription_id IN (SELECT id FROM picked)
        )
        UPDATE subscriptions s SET lease_owner = \(worker), lease_run = \(runID), lease_expires_at = now() + make_interval(secs => \(seconds))
        FROM picked WHERE s.id = picked.id
        RETURNING \(unescaped: SubscriptionRowSQL.columns.split(separator: ",").map { "s." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
        """
    }

    public func renewLeases(runID: Int64, ids: [Int64]) async throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        let seconds = leaseDuration.seconds
        return Set(try await transaction { connection, logger in
            try await connection.query("""
                UPDATE subscriptions SET lease_expires_at = now() + make_interval(secs => \(seconds))
                WHERE id = ANY(\(ids)) AND lease_run = \(runID)
                RETURNING id
                """, logger: logger).decode(Int64.self).collect()
        })
    }

    /// The one integer `query` answers (a count); 0 when it answers none.
    static func count(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws -> Int {
        Int(try await connection.query(query, logger: logger).decode(Int64.self).collect().first ?? 0)
    }
}
