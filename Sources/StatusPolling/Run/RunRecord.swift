import Foundation

/// One row of the run history, as `status-poller runs` shows it.
public struct RunRecord: Sendable, Equatable {
    public var id: Int64
    public var mode: RunMode
    public var status: RunStatus
    public var startedAtMs: Int64
    public var finishedAtMs: Int64?
    public var nowMs: Int64
    public var host: String
    public var pid: Int32
    public var options: [String: String]
    public var checkpointID: Int64
    public var targets: Int?
    public var selected: Int?
    public var verified: Int?
    public var updated: Int?
    public var unchanged: Int?
    public var failed: Int?
    public var retries: Int?
    public var exitCode: Int?
    /// The report as JSON, when the run finished.
    public var report: String?
    /// The worker that ran it (`--worker-name`), on a store shared by several workers.
    public var worker: String?
    /// The shared work it took part in: the night's or the backfill's first run, whose id every
    /// worker's run of that night or backfill carries (nil on a store of one machine).
    public var workID: Int64?
    /// The build that ran it (`status-poller --version` in one line); nil for runs before it was kept.
    public var version: String?

    public init(
        id: Int64, mode: RunMode, status: RunStatus, startedAtMs: Int64, finishedAtMs: Int64?, nowMs: Int64, host: String, pid: Int32,
        options: [String: String], checkpointID: Int64, targets: Int?, selected: Int?, verified: Int?, updated: Int?, unchanged: Int?,
        failed: Int?, retries: Int?, exitCode: Int?, report: String?, worker: String? = nil, workID: Int64? = nil, version: String? = nil
    ) {
        self.id = id
        self.mode = mode
        self.status = status
        self.startedAtMs = startedAtMs
        self.finishedAtMs = finishedAtMs
        self.nowMs = nowMs
        self.host = host
        self.pid = pid
        self.options = options
        self.checkpointID = checkpointID
        self.targets = targets
        self.selected = selected
        self.verified = verified
        self.updated = updated
        self.unchanged = unchanged
        self.failed = failed
        self.retries = retries
        self.exitCode = exitCode
        self.report = report
        self.worker = worker
        self.workID = workID
        self.version = version
    }
}
