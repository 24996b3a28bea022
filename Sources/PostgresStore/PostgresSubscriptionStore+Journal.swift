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

    /// The latest backfill with targets not done and not given up (leased ``maximumLeases`` times
    /// without a result: none is leased again), whoever started it and whatever became of its runs.
    public func resumableBackfill() async throws -> RunRecord? {
        try await read { connection, logger in
            try await connection.rows("""
                SELECT \(unescaped: PollRunsSQL.columns(.postgres)) FROM poll_runs r
                WHERE r.mode = 'backfill' AND r.work_id = r.id
                    AND EXISTS (SELECT 1 FROM work_targets t WHERE t.work_id = r.id AND NOT t.done AND t.leases < \(Self.maximumLeases))
                ORDER BY r.id DESC LIMIT 1
                """, logger: logger, PollRunsSQL.record).first
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
        let statement = try PollRunsSQL.finish(
            .postgres, runID: runID, report: report, status: status, checkpoint: checkpoint, finishedAtMs: Int64(Date().timeIntervalSince1970 * 1000))
        try await transaction { connection, logger in
            try await connection.execute(statement, logger: logger)
            try await connection.query(
                "UPDATE subscriptions SET lease_owner = NULL, lease_run = NULL, lease_expires_at = NULL WHERE lease_run = \(runID)", logger: logger)
        }
    }

    func insertRun(_ connection: PostgresConnection, _ start: RunStart, logger: Logger) async throws -> Int64 {
        try await connection.rows(try PollRunsSQL.insert(start, worker: worker), logger: logger) { reader -> Int64 in try reader.column() }[0]
    }

    static func count(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws -> Int {
        Int(try await connection.query(query, logger: logger).decode(Int64.self).collect().first ?? 0)
    }
}
