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
            try Row.fetchOne(db, sql: """
                SELECT * FROM poll_runs WHERE mode = 'backfill' AND status IN ('running', 'interrupted', 'aborted')
                ORDER BY id DESC LIMIT 1
                """).map(Self.runRecord)
        }
    }

    public func resumeBackfill(_ backfill: RunRecord, start: RunStart) async throws -> Int64 {
        try await pool.write { db in
            try db.execute(sql: "UPDATE poll_runs SET status = 'running', pid = ?, host = ?, finished_at = NULL WHERE id = ?", arguments: [start.pid, start.host, backfill.id])
        }
        return backfill.id
    }

    public func finishRun(_ runID: Int64, report: RunReport, status: RunStatus, checkpoint: Int64?) async throws {
        let json = try report.json()
        try await pool.write { db in
            try db.execute(literal: """
                UPDATE poll_runs SET
                    status = \(status.rawValue), finished_at = \(Int64(Date().timeIntervalSince1970 * 1000)),
                    checkpoint_id = max(checkpoint_id, \(checkpoint ?? 0)),
                    selected = \(report.selected), verified = \(report.verified), updated = \(report.updated),
                    unchanged = \(report.unchanged), failed = \(report.failed), retries = \(report.retries),
                    report = \(json), exit_code = \(report.exitCode.rawValue)
                WHERE id = \(runID)
                """)
        }
    }

    /// The newest runs first.
    public func runs(last count: Int) async throws -> [RunRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM poll_runs ORDER BY id DESC LIMIT ?", arguments: [count]).map(Self.runRecord)
        }
    }

    /// The audit trail of `userID`'s rows, newest first.
    public func history(userID: String, limit: Int = 1000) async throws -> [SubscriptionEvent] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM subscription_events WHERE user_id = ? ORDER BY id DESC LIMIT ?", arguments: [userID, limit]).map { row in
                let decoder = JSONDecoder()
                return SubscriptionEvent(
                    id: row["id"], subscriptionID: row["subscription_id"], userID: row["user_id"], runID: row["run_id"],
                    atMs: row["at"], reason: row["reason"], appleStatus: row["apple_status"],
                    entitlementBefore: row["entitlement_before"], entitlementAfter: row["entitlement_after"],
                    old: try decoder.decode(SubscriptionState.self, from: Data((row["old_values"] as String).utf8)),
                    new: try decoder.decode(SubscriptionState.self, from: Data((row["new_values"] as String).utf8)),
                    statusBackend: row["status_backend"], source: row["source"], notificationID: row["notification_id"])
            }
        }
    }

    /// The trail in `id` order, a page at a time (the report's one pass), its columns read out of
    /// the JSON by SQLite (`StateColumns.trailFromJSON`).
    public func trailEvents(in ids: Range<Int64>) async throws -> [TrailEvent] {
        // A cursor: each row read straight from the statement (no copy of its values first).
        try await pool.read { db in
            try Array(Row.fetchCursor(
                db,
                sql: """
                    SELECT e.id, e.subscription_id, e.at, e.reason,
                        coalesce(json_extract(e.new_values, '$.environment'), json_extract(e.old_values, '$.environment')), e.source,
                        CASE WHEN e.notification_id IS NOT NULL
                            THEN (SELECT n.apple_state_at FROM app_store_notifications AS n WHERE n.notification_id = e.notification_id) END,
                        e.revoked_at, \(StateColumns.trailFromJSON("e.new_values"))
                    FROM subscription_events AS e WHERE e.id >= ? AND e.id < ? ORDER BY e.id
                    """,
                arguments: [ids.lowerBound, ids.upperBound]
            ).map { row in
                TrailEvent(
                    id: row[0], subscriptionID: row[1], atMs: row[2], reason: row[3], environment: row[4], source: row[5], notifiedAtMs: row[6],
                    new: StateColumns.trailState(row, from: 8), revokedAtMs: row[7])
            })
        }
    }

    public func trailEventIDs() async throws -> ClosedRange<Int64>? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT min(id), max(id) FROM subscription_events"),
                let first: Int64 = row[0], let last: Int64 = row[1]
            else { return nil }
            return first...last
        }
    }

    private static func insertRun(_ db: Database, _ start: RunStart) throws -> Int64 {
        let options = String(decoding: try JSONSerialization.data(withJSONObject: start.options, options: [.sortedKeys]), as: UTF8.self)
        try db.execute(literal: """
            INSERT INTO poll_runs (mode, status, started_at, run_clock, host, pid, options, version)
            VALUES (\(start.mode.rawValue), 'running', \(start.startedAtMs), \(start.nowMs), \(start.host), \(start.pid), \(options), \(start.version))
            """)
        return db.lastInsertedRowID
    }

    private static func runRecord(_ row: Row) -> RunRecord {
        let optionsText: String = row["options"] ?? "{}"
        let options = (try? JSONSerialization.jsonObject(with: Data(optionsText.utf8))) as? [String: String] ?? [:]
        return RunRecord(
            id: row["id"], mode: RunMode(rawValue: row["mode"]) ?? .nightly, status: RunStatus(rawValue: row["status"]) ?? .running,
            startedAtMs: row["started_at"], finishedAtMs: row["finished_at"], nowMs: row["run_clock"], host: row["host"],
            pid: row["pid"], options: options, checkpointID: row["checkpoint_id"], targets: row["targets"], selected: row["selected"],
            verified: row["verified"], updated: row["updated"], unchanged: row["unchanged"], failed: row["failed"],
            retries: row["retries"], exitCode: row["exit_code"], report: row["report"], version: row["version"])
    }
}

extension SQLiteSubscriptionStore {
    /// When the last run of `mode` that verified every selected row ended (wall clock, ms).
    public func lastSuccessfulRunFinishedAt(mode: RunMode) async throws -> Int64? {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT max(finished_at) FROM poll_runs WHERE mode = ? AND exit_code = 0", arguments: [mode.rawValue])
        }
    }

    /// A user's rows with their bookkeeping, in `id` order (for `show`).
    public func subscriptionsWithBookkeeping(userID: String) async throws -> [(SubscriptionRow, SubscriptionBookkeeping)] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.withBookkeepingColumns) FROM subscriptions WHERE user_id = ? ORDER BY id", arguments: [userID]).map(Self.withBookkeeping)
        }
    }
}
