import EntitlementCore
import Foundation

/// The SQL of the run history (`poll_runs`) that both stores run, with the mapping of its rows
/// beside it. A backfill's targets are a run's own (`backfill_targets`) where one run has the
/// database to itself, and its work's (`work_targets`, shared by leases) where workers share it.
public enum PollRunsSQL {
    /// Opens a run as `running` and returns its id; `worker`: the worker's name on a store shared
    /// by several (PostgreSQL's `poll_runs.worker`; SQLite has no such column).
    public static func insert(_ start: RunStart, worker: String? = nil) -> SQLStatement {
        let options = JSONText.object(start.options)
        let workerValue: SQLStatement = worker.map { ", \($0)" } ?? ""
        return """
            INSERT INTO poll_runs (mode, status, started_at, run_clock, host, pid, options, version\(unescaped: worker == nil ? "" : ", worker"))
            VALUES (\(start.mode.rawValue), 'running', \(start.startedAtMs), \(start.nowMs), \(start.host), \(start.pid), \(options), \(start.version)\(workerValue))
            RETURNING id
            """
    }

    /// Closes a run with its report, status and exit code; the checkpoint only moves forward.
    public static func finish(
        _ dialect: SQLDialect, runID: Int64, report: RunReport, status: RunStatus, checkpoint: Int64?, finishedAtMs: Int64
    ) throws -> SQLStatement {
        """
        UPDATE poll_runs SET
            status = \(status.rawValue), finished_at = \(finishedAtMs), checkpoint_id = \(dialect.greatest("checkpoint_id", "\(checkpoint ?? 0)")),
            selected = \(report.selected), verified = \(report.verified), updated = \(report.updated),
            unchanged = \(report.unchanged), failed = \(report.failed), retries = \(report.retries),
            report = \(try report.json()), exit_code = \(report.exitCode.rawValue)
        WHERE id = \(runID)
        """
    }

    /// The statements that fix the target rows of backfill `runID`, then the run's count of them,
    /// read as one integer by the last. `shared`: the work is the run's own, leased by the workers
    /// who share it (``SQLStore/workShare``).
    public static func fixTargets(_ targets: BackfillTargets, runID: Int64, shared: Bool) -> [SQLStatement] {
        let into: SQLStatement = shared
            ? "INSERT INTO work_targets (work_id, subscription_id) SELECT \(runID), id FROM subscriptions"
            : "INSERT INTO backfill_targets (run_id, subscription_id) SELECT \(runID), id FROM subscriptions"
        var statements: [SQLStatement] = shared ? ["UPDATE poll_runs SET work_id = id WHERE id = \(runID)"] : []
        switch targets {
        case .all:
            statements.append(into)
        case .expiredSince(let ms):
            statements.append("\(into) WHERE expires_at >= \(ms) OR original_transaction_id IS NULL")
        case .userIDs(let users):
            // In chunks, well under SQLite's limit on bound values; a user named twice is one target.
            for start in stride(from: 0, to: users.count, by: 500) {
                let chunk = Array(users[start..<min(start + 500, users.count)])
                statements.append("\(into) WHERE user_id IN (\(list: chunk)) ON CONFLICT DO NOTHING")
            }
        }
        let table = shared ? "work_targets WHERE work_id" : "backfill_targets WHERE run_id"
        statements.append("UPDATE poll_runs SET targets = (SELECT count(*) FROM \(unescaped: table) = \(runID)) WHERE id = \(runID) RETURNING targets")
        return statements
    }

    /// The backfill to resume, read by ``record(_:)``. One run's own: the latest that did not
    /// finish. Shared work: the latest with targets not done and not given up (leased
    /// ``WorkSharingSQL/maximumLeases`` times without a result: none is leased again), whoever
    /// started it and whatever became of its runs.
    public static func resumable(_ dialect: SQLDialect, shared: Bool) -> SQLStatement {
        let unfinished: SQLStatement = shared
            ? """
              r.work_id = r.id AND EXISTS (SELECT 1 FROM work_targets t
                  WHERE t.work_id = r.id AND NOT t.done AND t.leases < \(WorkSharingSQL.maximumLeases))
              """
            : "r.status IN ('running', 'interrupted', 'aborted')"
        return """
            SELECT \(unescaped: columns(dialect)) FROM poll_runs r
            WHERE r.mode = 'backfill' AND \(unfinished)
            ORDER BY r.id DESC LIMIT 1
            """
    }

    /// Marks `runID` running again under this process (a backfill resumed by its own run).
    public static func resume(_ runID: Int64, start: RunStart) -> SQLStatement {
        "UPDATE poll_runs SET status = 'running', pid = \(start.pid), host = \(start.host), finished_at = NULL WHERE id = \(runID)"
    }

    /// Makes `runID` a run of `backfill`'s work (a worker's part of a shared backfill).
    public static func join(_ runID: Int64, backfill: RunRecord) -> SQLStatement {
        "UPDATE poll_runs SET work_id = \(backfill.workID ?? backfill.id), targets = \(backfill.targets) WHERE id = \(runID)"
    }

    /// When the last run of `mode` that verified every selected row ended (wall clock, ms).
    public static func lastSuccessFinishedAt(_ mode: RunMode) -> SQLStatement {
        "SELECT max(finished_at) FROM poll_runs WHERE mode = \(mode.rawValue) AND exit_code = 0"
    }

    /// The newest `count` runs first, read by ``record(_:)``.
    public static func latest(_ dialect: SQLDialect, count: Int) -> SQLStatement {
        "SELECT \(unescaped: columns(dialect)) FROM poll_runs r ORDER BY r.id DESC LIMIT \(count)"
    }

    /// The columns of a run `r`, in the order ``record(_:)`` reads them. SQLite's runs have no
    /// worker and share no work: NULL in their place.
    public static func columns(_ dialect: SQLDialect) -> String {
        let sharing = dialect == .postgres ? "r.worker, r.work_id" : "NULL, NULL"
        return """
            r.id, r.mode, r.status, r.started_at, r.finished_at, r.run_clock, r.host, r.pid, r.options, r.checkpoint_id, r.targets,
            r.selected, r.verified, r.updated, r.unchanged, r.failed, r.retries, r.exit_code, r.report, \(sharing), r.version
            """
    }

    /// A row of ``columns(_:)``.
    public static func record(_ row: inout some ColumnReader) throws -> RunRecord {
        let id: Int64 = try row.column()
        let mode = RunMode(rawValue: try row.column()) ?? .nightly
        let status = RunStatus(rawValue: try row.column()) ?? .running
        let startedAt: Int64 = try row.column(), finishedAt: Int64? = try row.column(), clock: Int64 = try row.column()
        let host: String = try row.column(), pid: Int32 = try row.column(), optionsText: String? = try row.column()
        let options = (try? JSONSerialization.jsonObject(with: Data((optionsText ?? "{}").utf8))) as? [String: String] ?? [:]
        return RunRecord(
            id: id, mode: mode, status: status, startedAtMs: startedAt, finishedAtMs: finishedAt, nowMs: clock, host: host, pid: pid,
            options: options, checkpointID: try row.column(), targets: try row.column(), selected: try row.column(),
            verified: try row.column(), updated: try row.column(), unchanged: try row.column(), failed: try row.column(),
            retries: try row.column(), exitCode: try row.column(), report: try row.column(), worker: try row.column(), workID: try row.column(),
            version: try row.column())
    }
}
