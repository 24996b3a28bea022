import Foundation

/// The SQL of the run history (`poll_runs`) that both stores run, with the mapping of its rows
/// beside it. How a backfill is opened and resumed differs (SQLite's `backfill_targets`,
/// PostgreSQL's work shared by several workers) and stays in each store.
public enum PollRunsSQL {
    /// Opens a run as `running` and returns its id; `worker`: the worker's name on a store shared
    /// by several (PostgreSQL's `poll_runs.worker`; SQLite has no such column).
    public static func insert(_ start: RunStart, worker: String? = nil) throws -> SQLStatement {
        let options = String(decoding: try JSONSerialization.data(withJSONObject: start.options, options: [.sortedKeys]), as: UTF8.self)
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
