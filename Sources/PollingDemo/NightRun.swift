import StatusPolling

/// What one night's run did: in process, one job's report; with worker processes, their reports
/// added up, so the night's line and the summary read the same either way, plus each worker's share.
public struct NightRun: Sendable {
    /// One worker process of the night and its report.
    public struct Worker: Sendable {
        public var name: String
        public var report: RunReport

        public init(name: String, report: RunReport) {
            self.name = name
            self.report = report
        }
    }

    public var report: RunReport
    public var exitCode: RunExitCode
    /// The worker processes, in the order they were started (empty in process).
    public var workers: [Worker]

    /// One job in process.
    public init(report: RunReport, exitCode: RunExitCode) {
        self.report = report
        self.exitCode = exitCode
        workers = []
    }

    /// The workers of one night: counts add up, the lowest concurrency is the lowest any reached,
    /// the duration the longest, an abort or interruption of any worker is the night's; the exit
    /// code follows from the sum as a run's does from its report.
    public init(nowMs: Int64, workers: [Worker]) {
        var total = RunReport(nowMs: nowMs, dryRun: false)
        total.lowestConcurrency = workers.map(\.report.lowestConcurrency).min() ?? 0
        for worker in workers {
            let r = worker.report
            total.selected += r.selected
            total.selectedLapsed += r.selectedLapsed
            total.skippedFresh += r.skippedFresh
            total.verified += r.verified
            total.updated += r.updated
            total.unchanged += r.unchanged
            total.discovered += r.discovered
            total.superseded += r.superseded
            total.failedByReason.merge(r.failedByReason, uniquingKeysWith: +)
            total.failedByUpstreamStatus.merge(r.failedByUpstreamStatus, uniquingKeysWith: +)
            total.transitions.merge(r.transitions, uniquingKeysWith: +)
            total.requests += r.requests
            total.retries += r.retries
            total.throttled += r.throttled
            total.durationSeconds = max(total.durationSeconds, r.durationSeconds)
            total.aborted = total.aborted ?? r.aborted
            total.interrupted = total.interrupted || r.interrupted
            total.deadlineReached = total.deadlineReached || r.deadlineReached
            total.abandoned += r.abandoned
            total.checkpoint = max(total.checkpoint, r.checkpoint)
        }
        report = total
        exitCode = total.exitCode
        self.workers = workers
    }
}
