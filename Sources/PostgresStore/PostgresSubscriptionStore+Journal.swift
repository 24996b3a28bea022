import Foundation
import Logging
import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
    public func startRun(_ start: RunStart) async throws -> Int64 {
        try await transaction { connection, logger in try await self.insertRun(connection, start, logger: logger) }
    }

    /// Opens a backfill whose targets every worker shares: the run is its own work.
    public func startBackfill(_ start: RunStart, targets: BackfillTargets) async throws -> (runID: Int64, targets: Int) {
        try await transaction { connection, logger in
            let runID = try await self.insertRun(connection, start, logger: logger)
            try await connection.query("UPDATE poll_runs SET work_id = id WHERE id = \(runID)", logger: logger)
            switch targets {
            case .all:
                try await connection.query("INSERT INTO work_targets (work_id, subscription_id) SELECT \(runID), id FROM subscriptions", logger: logger)
            case .expiredSince(let ms):
                try await connection.query("""
                    INSERT INTO work_targets (work_id, subscription_id) SELECT \(runID), id FROM subscriptions
                    WHERE expires_at >= \(ms) OR original_transaction_id IS NULL
                    """, logger: logger)
            case .userIDs(let users):
                try await connection.query("""
                    INSERT INTO work_targets (work_id, subscription_id) SELECT \(runID), id FROM subscriptions
                    WHERE user_id = ANY(\(users)) ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
            let count = try await Self.count(connection, "SELECT count(*) FROM work_targets WHERE work_id = \(runID)", logger: logger)
            try await connection.query("UPDATE poll_runs SET targets = \(count) WHERE id = \(runID)", logger: logger)
            return (runID, count)
        }
    }

    /// The latest backfill with targets not done, whoever started it and whatever became of its runs.
    public func resumableBackfill() async throws -> RunRecord? {
        try await read { connection, logger in
            try await Self.runRecords(connection.query("""
                SELECT \(unescaped: Self.runColumns) FROM poll_runs r
                WHERE r.mode = 'backfill' AND r.work_id = r.id
                    AND EXISTS (SELECT 1 FROM work_targets t WHERE t.work_id = r.id AND NOT t.done)
                ORDER BY r.id DESC LIMIT 1
                """, logger: logger)).first
        }
    }

    /// A new run of the same backfill for this worker, so each worker's part is in the history.
    public func resumeBackfill(_ backfill: RunRecord, start: RunStart) async throws -> Int64 {
        try await transaction { connection, logger in
            let runID = try await self.insertRun(connection, start, logger: logger)
            try await connection.query(
                "UPDATE poll_runs SET work_id = \(backfill.workID ?? backfill.id), targets = \(backfill.targets) WHERE id = \(runID)", logger: logger)
            return runID
        }
    }

    /// Closes the run and releases the leases it still holds (rows it leased but did not start,
    /// after a stop), so other workers take them at once.
    public func finishRun(_ runID: Int64, report: RunReport, status: RunStatus, checkpoint: Int64?) async throws {
        let json = try report.json()
        let finishedAt = Int64(Date().timeIntervalSince1970 * 1000)
        try await transaction { connection, logger in
            try await connection.query("""
                UPDATE poll_runs SET
                    status = \(status.rawValue), finished_at = \(finishedAt), checkpoint_id = GREATEST(checkpoint_id, \(checkpoint ?? 0)),
                    selected = \(report.selected), verified = \(report.verified), updated = \(report.updated),
                    unchanged = \(report.unchanged), failed = \(report.failed), retries = \(report.retries),
                    report = \(json), exit_code = \(Int(report.exitCode.rawValue))
                WHERE id = \(runID)
                """, logger: logger)
            try await connection.query(
                "UPDATE subscriptions SET lease_owner = NULL, lease_run = NULL, lease_expires_at = NULL WHERE lease_run = \(runID)", logger: logger)
        }
    }

    public func runs(last count: Int) async throws -> [RunRecord] {
        try await read { connection, logger in
            try await Self.runRecords(connection.query("SELECT \(unescaped: Self.runColumns) FROM poll_runs r ORDER BY r.id DESC LIMIT \(count)", logger: logger))
        }
    }

    public func history(userID: String, limit: Int) async throws -> [SubscriptionEvent] {
        try await read { connection, logger in
            let decoder = JSONDecoder()
            return try await Self.rows(connection.query("""
                SELECT id, subscription_id, user_id, run_id, at, reason, apple_status, entitlement_before, entitlement_after,
                    old_values, new_values, status_backend, source, notification_id
                FROM subscription_events WHERE user_id = \(userID) ORDER BY id DESC LIMIT \(limit)
                """, logger: logger)
            ) { reader in
                SubscriptionEvent(
                    id: try reader.next(), subscriptionID: try reader.next(), userID: try reader.next(), runID: try reader.next(),
                    atMs: try reader.next(), reason: try reader.next(), appleStatus: try reader.next(),
                    entitlementBefore: try reader.next(), entitlementAfter: try reader.next(),
                    old: try decoder.decode(SubscriptionState.self, from: Data(try reader.next(String.self).utf8)),
                    new: try decoder.decode(SubscriptionState.self, from: Data(try reader.next(String.self).utf8)),
                    statusBackend: try reader.next(), source: try reader.next(), notificationID: try reader.next())
            }
        }
    }

    /// The trail in `id` order, a page at a time (the report's one pass), its columns read out of
    /// the JSON by PostgreSQL, in ``RowReader/trailState()``'s order: no decoder per row. Only
    /// `new_values` is parsed (the report keeps each row's columns itself), once, by
    /// `json_to_record` (a `jsonb` cast and `->>` per column cost the server four times as much).
    public func trailEvents(in ids: Range<Int64>) async throws -> [TrailEvent] {
        try await read { connection, logger in
            try await Self.rows(connection.query(PostgresQuery(unsafeSQL: """
                SELECT e.id, e.subscription_id, e.at, e.reason, coalesce(n.environment, e.old_values::json->>'environment'), e.source,
                    CASE WHEN e.notification_id IS NOT NULL
                        THEN (SELECT a.apple_state_at FROM app_store_notifications AS a WHERE a.notification_id = e.notification_id) END,
                    e.revoked_at, \(Self.trailColumns("n"))
                FROM (SELECT id, subscription_id, at, reason, source, notification_id, old_values, new_values, revoked_at
                      FROM subscription_events WHERE id >= \(ids.lowerBound) AND id < \(ids.upperBound)) AS e,
                    json_to_record(e.new_values::json) AS n(\(Self.trailRecord))
                ORDER BY e.id
                """), logger: logger)
            ) { reader in
                let id: Int64 = try reader.next(), subscriptionID: Int64 = try reader.next(), atMs: Int64 = try reader.next()
                let reason: String = try reader.next(), environment: String? = try reader.next(), source: String? = try reader.next()
                let notifiedAtMs: Int64? = try reader.next(), revokedAtMs: Int64? = try reader.next()
                return TrailEvent(
                    id: id, subscriptionID: subscriptionID, atMs: atMs, reason: reason, environment: environment, source: source,
                    notifiedAtMs: notifiedAtMs, new: try reader.trailState(), revokedAtMs: revokedAtMs)
            }
        }
    }

    public func trailEventIDs() async throws -> ClosedRange<Int64>? {
        try await read { connection, logger in
            let row = try await connection.query("SELECT min(id), max(id) FROM subscription_events", logger: logger)
                .decode((Int64?, Int64?).self).collect().first
            guard let first = row?.0, let last = row?.1 else { return nil }
            return first...last
        }
    }

    /// The contract columns the report reads, typed, as `json_to_record` takes them out of a trail row's JSON.
    static let trailRecord = """
        original_transaction_id text, environment text, expires_at bigint, grace_period_expires_at bigint, \
        is_in_billing_retry boolean, auto_renew_status boolean, expiration_intent integer, cancelled_at bigint
        """

    /// The report's columns (``TrailState``) of the record `r`, for ``RowReader/trailState()``: the
    /// identifiers only as "is there one".
    static func trailColumns(_ r: String) -> String {
        """
        \(r).original_transaction_id IS NOT NULL, \(r).expires_at, \(r).grace_period_expires_at, coalesce(\(r).is_in_billing_retry, false), \
        \(r).auto_renew_status, \(r).expiration_intent, \(r).cancelled_at
        """
    }

    public func lastSuccessfulRunFinishedAt(mode: RunMode) async throws -> Int64? {
        try await read { connection, logger in
            try await connection.query(
                "SELECT max(finished_at) FROM poll_runs WHERE mode = \(mode.rawValue) AND exit_code = 0", logger: logger
            ).decode(Int64?.self).collect().first ?? nil
        }
    }

    func insertRun(_ connection: PostgresConnection, _ start: RunStart, logger: Logger) async throws -> Int64 {
        let options = String(decoding: try JSONSerialization.data(withJSONObject: start.options, options: [.sortedKeys]), as: UTF8.self)
        return try await connection.query("""
            INSERT INTO poll_runs (mode, status, started_at, run_clock, host, pid, worker, options, version)
            VALUES (\(start.mode.rawValue), 'running', \(start.startedAtMs), \(start.nowMs), \(start.host), \(Int(start.pid)), \(worker), \(options), \(start.version))
            RETURNING id
            """, logger: logger).decode(Int64.self).collect()[0]
    }

    static let runColumns = """
        r.id, r.mode, r.status, r.started_at, r.finished_at, r.run_clock, r.host, r.pid, r.options, r.checkpoint_id, r.targets,
        r.selected, r.verified, r.updated, r.unchanged, r.failed, r.retries, r.exit_code, r.report, r.worker, r.work_id, r.version
        """

    static func runRecords(_ sequence: PostgresRowSequence) async throws -> [RunRecord] {
        try await rows(sequence) { reader in
            let id: Int64 = try reader.next()
            let mode = RunMode(rawValue: try reader.next()) ?? .nightly
            let status = RunStatus(rawValue: try reader.next()) ?? .running
            let startedAt: Int64 = try reader.next()
            let finishedAt: Int64? = try reader.next()
            let clock: Int64 = try reader.next()
            let host: String = try reader.next()
            let pid = Int32(try reader.next(Int.self))
            let optionsText: String = try reader.next()
            let options = (try? JSONSerialization.jsonObject(with: Data(optionsText.utf8))) as? [String: String] ?? [:]
            return RunRecord(
                id: id, mode: mode, status: status, startedAtMs: startedAt, finishedAtMs: finishedAt, nowMs: clock, host: host, pid: pid,
                options: options, checkpointID: try reader.next(), targets: try reader.next(), selected: try reader.next(),
                verified: try reader.next(), updated: try reader.next(), unchanged: try reader.next(), failed: try reader.next(),
                retries: try reader.next(), exitCode: try reader.next(), report: try reader.next(), worker: try reader.next(), workID: try reader.next(),
                version: try reader.next())
        }
    }

    static func count(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws -> Int {
        Int(try await connection.query(query, logger: logger).decode(Int64.self).collect().first ?? 0)
    }
}
