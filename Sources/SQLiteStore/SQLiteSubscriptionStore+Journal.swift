import Foundation
import GRDB
import StatusPolling

extension SQLiteSubscriptionStore {
    public func startRun(_ start: RunStart) async throws -> Int64 {
        try await pool.write { db in try Self.insertRun(db, start) }
    }

    public func startBackfill(_ start: RunStart, targets: BackfillTargets) async throws -> (runID: Int64, targets: Int) {
        try await pool.write { db in
            let runID = try Self.insertRun(db, start)
            switch targets {
            case .all:
                try db.execute(literal: "INSERT INTO backfill_targets SELECT \(runID), id FROM subscriptions")
            case .expiredSince(let ms):
                try db.execute(literal: """
                    INSERT INTO backfill_targets SELECT \(runID), id FROM subscriptions
                    WHERE expires_at >= \(ms) OR original_transaction_id IS NULL
                    """)
            case .userIDs(let users):
                // In chunks, well under SQLite's limit on bound arguments.
                for start in stride(from: 0, to: users.count, by: 500) {
                    let chunk = Array(users[start..<min(start + 500, users.count)])
                    try db.execute(literal: "INSERT OR IGNORE INTO backfill_targets SELECT \(runID), id FROM subscriptions WHERE user_id IN \(chunk)")
                }
            }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM backfill_targets WHERE run_id = ?", arguments: [runID]) ?? 0
            try db.execute(sql: "UPDATE poll_runs SET targets = ? WHERE id = ?", arguments: [count, runID])
            return (runID, count)
        }
    }

    public func resumableBackfill() async throws -> RunRecord? {
        try await pool.read { db in
            try db.fetchOne(shared: """
                SELECT \(unescaped: PollRunsSQL.columns(.sqlite)) FROM poll_runs r
                WHERE r.mode = 'backfill' AND r.status IN ('running', 'interrupted', 'aborted')
                ORDER BY r.id DESC LIMIT 1
                """, PollRunsSQL.record)
        }
    }

    public func resumeBackfill(_ backfill: RunRecord, start: RunStart) async throws -> Int64 {
        try await pool.write { db in
            try db.execute(sql: "UPDATE poll_runs SET status = 'running', pid = ?, host = ?, finished_at = NULL WHERE id = ?", arguments: [start.pid, start.host, backfill.id])
        }
        return backfill.id
    }

    public func finishRun(_ runID: Int64, report: RunReport, status: RunStatus, checkpoint: Int64?) async throws {
        let statement = try PollRunsSQL.finish(
            .sqlite, runID: runID, report: report, status: status, checkpoint: checkpoint, finishedAtMs: Int64(Date().timeIntervalSince1970 * 1000))
        try await pool.write { db in try db.execute(shared: statement) }
    }

    private static func insertRun(_ db: Database, _ start: RunStart) throws -> Int64 {
        try db.execute(shared: try PollRunsSQL.insert(start))
        return db.lastInsertedRowID
    }
}
