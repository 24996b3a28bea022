import AppStoreBackends
import EntitlementCore
import Logging

/// One run or backfill from start to exit code, as cron runs it: open the store, take the overlap
/// lock, catch up from Apple's notification history (a nightly run given a ``CatchUp``), record the
/// run in the history, listen for a stop signal, run the pipeline against the status source,
/// report, write the metrics file, and map it all to an exit code.
///
/// The executable parses options and builds the pieces (the one place that names the concrete
/// store and source); the demo plays its nights through this same type.
public struct PollJob: Sendable {
    /// Which rows the job covers.
    public enum Selection: Sendable, Equatable {
        /// The nightly selection with these windows.
        case nightly(SelectionWindows)
        /// A new backfill over these targets, fixed when it starts.
        case backfill(BackfillTargets)
        /// The latest backfill that did not finish, from its checkpoint.
        case resumeBackfill
    }

    /// The settings of one job.
    public struct Configuration: Sendable {
        public var selection: Selection
        /// `receipt.bundle_id` / `bundleId` every answer must carry.
        public var bundleID: String
        /// The run's clock, ms since 1970.
        public var nowMs: Int64
        /// Rows verified at once, at most.
        public var concurrency: Int
        /// Ask the App Store and report, but write nothing (not even the run history).
        public var dryRun: Bool
        /// At most this many rows started per second (nil: no limit).
        public var maxRate: Double?
        /// The settings, as the run history records them (never a secret).
        public var recordedOptions: [String: String]
        /// Write Prometheus metrics here at the end (nil: none).
        public var metricsFile: String?
        /// The worker's name as the metrics' `worker` label (nil: no label, one process per database).
        public var metricsWorker: String? = nil
        /// Stop on SIGTERM/SIGINT (the command line); off where the host process owns its signals.
        public var handlesSignals: Bool
        /// Show progress on stderr (a terminal line, or a log line every 30 s).
        public var showsProgress: Bool
        /// Stops the run when the App Store fails for a sustained stretch (nil: off).
        public var circuitBreaker: CircuitBreaker?
        /// How long the run may take before it stops starting rows (nil: no limit).
        public var deadline: Duration?
        /// When transient failures stop being noise and the concurrency is halved.
        public var overload: OverloadThreshold
        /// The build running the job (the executable's `--version` in one line): in the report and
        /// the run's ``RunStart``; nil where the host process names none.
        public var version: String?
        /// How long the poller's own history is kept: a nightly run prunes it after polling, under
        /// its lock (nothing by default).
        public var retention = RetentionPolicy()

        public init(
            selection: Selection, bundleID: String, nowMs: Int64, concurrency: Int = PollRun.Configuration.defaultConcurrency,
            dryRun: Bool = false, maxRate: Double? = nil, recordedOptions: [String: String] = [:], metricsFile: String? = nil,
            handlesSignals: Bool = true, showsProgress: Bool = true, circuitBreaker: CircuitBreaker? = CircuitBreaker(), deadline: Duration? = nil,
            overload: OverloadThreshold = OverloadThreshold(), version: String? = nil
        ) {
            self.selection = selection
            self.bundleID = bundleID
            self.nowMs = nowMs
            self.concurrency = concurrency
            self.dryRun = dryRun
            self.maxRate = maxRate
            self.recordedOptions = recordedOptions
            self.metricsFile = metricsFile
            self.handlesSignals = handlesSignals
            self.showsProgress = showsProgress
            self.circuitBreaker = circuitBreaker
            self.deadline = deadline
            self.overload = overload
            self.version = version
        }

        var mode: RunMode {
            if case .nightly = selection { return .nightly }
            return .backfill
        }
    }

    /// How a job ended: the report when the pipeline ran, the exit code, and what to tell the
    /// operator on stderr when it could not run.
    public struct Outcome: Sendable {
        public var report: RunReport?
        public var exitCode: RunExitCode
        /// Why the job did not run (the lock held, the database unusable), with what to do.
        public var error: String?
    }

    public var configuration: Configuration
    public var database: any PollingDatabase
    public var source: any SubscriptionStatusSource
    /// Read before a nightly run polls (nil: no catch-up; a dry run or a backfill never catches up).
    public var catchUp: CatchUp?
    public var logger: Logger
    /// Requested by a signal, or by the host process.
    public var stop: StopSignal

    public init(
        configuration: Configuration, database: any PollingDatabase, source: any SubscriptionStatusSource, catchUp: CatchUp? = nil, logger: Logger,
        stop: StopSignal = StopSignal()
    ) {
        self.configuration = configuration
        self.database = database
        self.source = source
        self.catchUp = catchUp
        self.logger = logger
        self.stop = stop
    }

    /// What the job settled on once the store is open and the lock held.
    struct Plan {
        var selection: RowSelection
        var runID: Int64?
        var resumeAfter: Int64 = 0
        var note: String?
    }

    /// Runs the job. Never throws: every way it can end is an ``Outcome``.
    public func run() async -> Outcome {
        let store: any PollingStore
        do {
            store = try await database.open()
        } catch let error as StoreError {
            return Outcome(report: nil, exitCode: error.exitCode, error: "\(error)")
        } catch {
            return Outcome(report: nil, exitCode: .usage, error: "\(error)")
        }
        let outcome = await run(on: store)
        try? await store.close()
        return outcome
    }

    private func run(on store: any PollingStore) async -> Outcome {
        let mode = configuration.mode
        let lock: any RunLease
        do {
            lock = try await database.acquireRunLock(holder: .current(command: "status-poller \(mode.rawValue)\(configuration.dryRun ? " --dry-run" : "")"))
        } catch let failure as RunLock.Failure {
            if case .held = failure { return Outcome(report: nil, exitCode: .locked, error: "\(failure)") }
            return Outcome(report: nil, exitCode: .usage, error: "\(failure)")
        } catch {
            return Outcome(report: nil, exitCode: .usage, error: "\(error)")
        }
        defer { lock.release() }

        // Under the lock: a second run refused by it reads nothing from Apple.
        var selection = configuration.selection
        var caughtUp: CatchUpSummary?
        if let catchUp, !configuration.dryRun, case .nightly(var windows) = selection {
            let summary = await self.catchUp(catchUp, store: store, logger: logger)
            // Rows recorded since the history was read without a gap heard every change Apple notified.
            windows.coveredFrom = summary.coveredFrom
            selection = .nightly(windows)
            caughtUp = summary
        }

        let options = configuration.recordedOptions.merging(["dry_run": String(configuration.dryRun)]) { $1 }
        let plan: Plan
        do {
            guard let planned = try await self.plan(selection, store, start: .current(mode: mode, nowMs: configuration.nowMs, options: options, version: configuration.version)) else {
                return Outcome(report: nil, exitCode: .usage, error: "no interrupted backfill to resume in \(database.name); `status-poller runs` lists the runs.")
            }
            plan = planned
        } catch {
            return Outcome(report: nil, exitCode: .aborted, error: "the database could not be prepared for the run: \(error)")
        }
        var logger = self.logger
        if let runID = plan.runID { logger[metadataKey: "run.id"] = "\(runID)" }
        if let note = plan.note { logger.notice("\(note)") }

        let signals = configuration.handlesSignals ? SignalHandling.install(stop: stop, logger: logger) : nil
        defer { signals?.cancel() }
        let progress = configuration.showsProgress ? ProgressReporter(logger: logger) : nil
        let run = PollRun(
            configuration: .init(
                bundleID: configuration.bundleID, nowMs: configuration.nowMs, selection: plan.selection, concurrency: configuration.concurrency,
                dryRun: configuration.dryRun, runID: plan.runID, resumeAfter: plan.resumeAfter, maxRate: configuration.maxRate,
                circuitBreaker: configuration.circuitBreaker, deadline: configuration.deadline, overload: configuration.overload),
            store: store, source: source, logger: logger, stop: stop, progress: { progress?.update($0) })
        var report = await run.run()
        report.version = configuration.version
        report.catchUp = caughtUp
        progress?.finish()
        if mode == .nightly, !configuration.dryRun, !configuration.retention.keepsEverything, report.aborted == nil, !report.interrupted {
            // After the rows, under the run's lock; a prune that fails costs the run nothing.
            do {
                let pruned = try await Pruner(store: store, policy: configuration.retention, logger: logger).prune(nowMs: configuration.nowMs)
                report.pruned = Dictionary(uniqueKeysWithValues: pruned.deleted.map { ($0.key.rawValue, $0.value) })
            } catch {
                logger.error("could not prune the history; the run's rows are written", metadata: ["error": "\(error)"])
            }
        }
        if let runID = plan.runID, !configuration.dryRun {
            // The run history is the job's, not the run's: a writer needs no run.
            let status: RunStatus = report.aborted != nil ? .aborted : report.interrupted ? .interrupted : .finished
            do {
                try await store.finishRun(runID, report: report, status: status, checkpoint: report.checkpoint)
            } catch {
                logger.error("could not record the run's end in the run history", metadata: ["error": "\(error)"])
            }
        }

        if let metricsFile = configuration.metricsFile {
            do {
                let lastSuccess = try await store.lastSuccessfulRunFinishedAt(mode: mode)
                try MetricsFile.write(report, mode: mode, lastSuccessMs: lastSuccess, worker: configuration.metricsWorker, to: metricsFile)
            } catch {
                logger.error("could not write the metrics file", metadata: ["path": "\(metricsFile)", "error": "\(error)"])
            }
        }
        return Outcome(report: report, exitCode: report.exitCode, error: nil)
    }

    /// Opens the run in the history (a dry run writes nothing, not even there). Nil when there is
    /// no backfill to resume.
    private func plan(_ selection: Selection, _ store: any RunJournal, start: RunStart) async throws -> Plan? {
        switch selection {
        case .nightly(let windows):
            let runID = configuration.dryRun ? nil : try await store.startRun(start)
            return Plan(selection: .nightly(windows), runID: runID)
        case .backfill(let targets):
            let (runID, count) = try await store.startBackfill(start, targets: targets)
            return Plan(selection: .backfill(runID: runID), runID: runID, note: "backfill \(runID): \(count) subscriptions")
        case .resumeBackfill:
            guard let previous = try await store.resumableBackfill() else { return nil }
            let runID = try await store.resumeBackfill(previous, start: start)
            return Plan(
                selection: .backfill(runID: runID), runID: runID, resumeAfter: previous.checkpointID,
                note: "resuming backfill \(previous.id) after subscription \(previous.checkpointID)")
        }
    }
}
