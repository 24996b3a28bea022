import AppStoreBackends
import EntitlementCore
import Logging

/// One status-polling run: list the due rows, verify up to `concurrency` receipts at once, decide,
/// and write the results in batched transactions.
///
/// The stages are bounded — the due ids (8 bytes a row) and one page of rows read ahead,
/// `concurrency` requests in flight (and at most ``Configuration/maxRowsInProgress`` rows started,
/// those sleeping out a retry's backoff included), one batch being written and at most ``Configuration/maxPending``
/// answers waiting for it (no new row starts beyond that) — so memory follows the concurrency, and
/// a crash loses at most the answers in flight and those not yet written, which the next run asks
/// for again.
public struct PollRun: Sendable {
    /// The settings of one run.
    public struct Configuration: Sendable {
        /// Receipts verified at once unless configured (`--concurrency`).
        public static let defaultConcurrency = 8
        /// The concurrency a run accepts.
        public static let allowedConcurrency = 1...512

        /// The bundle id every answer must carry (`receipt.bundle_id`, `bundleId`).
        public var bundleID: String
        /// The run's clock, ms since 1970: selection windows and bookkeeping use it.
        public var nowMs: Int64
        public var selection: RowSelection
        /// Requests in flight, at most; the run backs off below it when the App Store answers 429
        /// or `Retry-After`, or when transient failures pass `overload`'s share of recent answers.
        /// A row sleeping out a retry's backoff holds no request.
        public var concurrency: Int
        /// When transient failures stop being noise and the concurrency is halved.
        public var overload: OverloadThreshold
        /// Rows started and not finished, at most, those sleeping out a backoff included: room for
        /// the retries of a stretch of failures without starting rows without bound.
        var maxRowsInProgress: Int { 2 * concurrency + 16 }
        /// Rows read per page of the selection.
        public var pageSize: Int
        /// Results written per transaction, at most.
        public var batchSize: Int
        /// While this many answers wait for the writer, no new row starts: a slow database slows
        /// the run instead of piling up answers in memory, or past their rows' leases on a shared store.
        /// One batch's worth beside the one being written: the answers of a round of requests in
        /// flight (twice that held 2.5 MB more at c = 256, heaptrack, at the same throughput).
        var maxPending: Int { max(batchSize, concurrency) }
        /// How long a result may wait for its batch to fill before it is written anyway.
        public var flushInterval: Duration
        /// Ask Apple and report, but write nothing.
        public var dryRun: Bool
        /// The run history's id for this run (nil: not recorded, e.g. a dry run).
        public var runID: Int64?
        /// Start after this subscription id (a resumed backfill's checkpoint).
        public var resumeAfter: Int64
        /// At most this many rows started per second (nil: no limit).
        public var maxRate: Double?
        /// After a stop request, the deadline or a tripped breaker, how long requests in flight
        /// may still finish.
        public var stopGrace: Duration
        /// Stops the run when the App Store fails for a sustained stretch (nil: off, every row is tried).
        public var circuitBreaker: CircuitBreaker?
        /// How long the run may take: once it passes, no new row starts, as on SIGTERM (nil: no limit).
        public var deadline: Duration?

        public init(
            bundleID: String, nowMs: Int64, selection: RowSelection = .nightly(SelectionWindows()), concurrency: Int = Self.defaultConcurrency,
            pageSize: Int = 500, batchSize: Int = 100, flushInterval: Duration = .milliseconds(50), dryRun: Bool = false,
            runID: Int64? = nil, resumeAfter: Int64 = 0, maxRate: Double? = nil, stopGrace: Duration = .seconds(3),
            circuitBreaker: CircuitBreaker? = CircuitBreaker(), deadline: Duration? = nil, overload: OverloadThreshold = OverloadThreshold()
        ) {
            self.bundleID = bundleID
            self.nowMs = nowMs
            self.selection = selection
            self.concurrency = concurrency
            self.overload = overload
            self.pageSize = pageSize
            self.batchSize = batchSize
            self.flushInterval = flushInterval
            self.dryRun = dryRun
            self.runID = runID
            self.resumeAfter = resumeAfter
            self.maxRate = maxRate
            self.stopGrace = stopGrace
            self.circuitBreaker = circuitBreaker
            self.deadline = deadline
        }
    }

    public var configuration: Configuration
    public var store: any SubscriptionStore
    /// Where each row's status comes from (verifyReceipt, or another backend).
    public var source: any SubscriptionStatusSource
    public var logger: Logger
    /// Requested on SIGTERM/SIGINT by the executable.
    public var stop: StopSignal
    /// Called after each written batch with the run's progress so far.
    public var progress: @Sendable (RunProgress) -> Void
    /// Reads the wall clock for the report's duration; injectable for tests.
    public var elapsed: @Sendable () -> ContinuousClock.Instant

    public init(
        configuration: Configuration, store: any SubscriptionStore, source: any SubscriptionStatusSource, logger: Logger,
        stop: StopSignal = StopSignal(), progress: @escaping @Sendable (RunProgress) -> Void = { _ in },
        elapsed: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.configuration = configuration
        self.store = store
        self.source = source
        self.logger = logger
        self.stop = stop
        self.progress = progress
        self.elapsed = elapsed
    }

    /// Runs to the end of the selection, or until stopped. Never throws: an abort (credentials
    /// rejected, the store unreadable) and an interruption are in the report, with the counts of what was done.
    ///
    /// The ``PollRunMachine`` decides; this drives it: it does the machine's actions with child
    /// tasks, the cursor and the writer, and tells it what came of them.
    public func run() async -> RunReport {
        let started = elapsed()
        var report = RunReport(nowMs: configuration.nowMs, dryRun: configuration.dryRun)
        var machine = PollRunMachine(configuration)
        let gate = RequestGate(
            limit: ConcurrencyLimit(ceiling: configuration.concurrency, threshold: configuration.overload), breaker: configuration.circuitBreaker)
        var pacer = RatePacer(perSecond: configuration.maxRate)
        do {
            var rows = try await SelectionCursor.open(store: store, configuration: configuration)
            report.skippedFresh = rows.skippedFresh
            let deadlineAt = configuration.deadline.map { started + $0 }
            let ending = try await withThrowingTaskGroup(of: PollRunMachine.Event.self) { group in
                /// A stop may be requested at any moment: the machine hears of it before each event.
                func tell(_ event: PollRunMachine.Event) -> [PollRunMachine.Action] {
                    (stop.isRequested ? machine.handle(.stopRequested) : []) + machine.handle(event)
                }
                var actions = tell(.began)
                while true {
                    var next: PollRunMachine.Event?
                    for action in actions {
                        switch action {
                        case .start(let child):
                            if case .verify = child { await pacer.wait() }
                            group.addTask(operation: task(child, gate: gate))
                        case .log(let note): log(note, done: report.selected)
                        case .cancelTasks: group.cancelAll()
                        case .closeGate(let reason): gate.close(reason)
                        case .count(let written): for row in written { count(row, into: &report) }
                        case .reportProgress:
                            progress(RunProgress(done: report.selected, total: rows.total, failed: report.failed, elapsed: elapsed() - started))
                        case .checkRoom:
                            let room = gate.snapshot
                            next = .room(limit: room.limit.current, backingOff: room.backingOff, version: room.version, closed: room.closed)
                        case .takeRow: next = .nextRow(try await rows.next())
                        case .awaitEvent: next = try await group.next()
                        case .awaitPeers:
                            // On a store shared by several workers, once this run's rows are written,
                            // it waits for rows other workers still hold (one may have died).
                            let free = try await rows.awaitPeers(stopping: { stop.isRequested || deadlineAt.map { elapsed() >= $0 } == true })
                            next = .peersAwaited(rowFree: free)
                        case .writeRemaining(let batch, let checkpoint):
                            let (written, fatal) = await write(batch, checkpoint: checkpoint)
                            next = .written(written, fatal: fatal)
                        case .finish(let ending): return ending
                        }
                    }
                    guard let next else { preconditionFailure("the machine's every answer ends with what to tell it next") }
                    actions = tell(next)
                }
            }
            switch ending {
            case .finished: break
            case .stopped:
                report.interrupted = true
                logger.notice("run stopped on request", metadata: ["done": "\(report.selected)", "checkpoint": "\(machine.checkpoint)"])
            case .deadlineReached:
                report.interrupted = true
                report.deadlineReached = true
                logger.notice("run stopped at its deadline", metadata: ["done": "\(report.selected)", "checkpoint": "\(machine.checkpoint)"])
            case .aborted(let reason):
                report.aborted = reason
            }
        } catch let abort as RunAbort {
            report.aborted = abort.description
            logger.error("run aborted", metadata: ["reason": "\(abort)"])
        } catch {
            report.aborted = "the store could not be read: \(error)"
            logger.error("run aborted: store unreadable", metadata: ["error": "\(error)"])
        }
        report.durationSeconds = Double((elapsed() - started).milliseconds) / 1000
        report.abandoned = machine.abandoned
        report.checkpoint = machine.checkpoint
        let gateState = gate.snapshot
        let limit = gateState.limit
        // Rows the breaker cut off, or a stop abandoned, sent requests too: the gate counted them.
        report.requests = max(report.requests, gateState.sent)
        report.throttled = limit.throttled
        report.lowestConcurrency = limit.lowest
        return report
    }

    /// The child task that carries out `child`; it hands back the event the machine waits for.
    private func task(_ child: PollRunMachine.ChildTask, gate: RequestGate) -> @Sendable () async throws -> PollRunMachine.Event {
        switch child {
        case .watchForStop(let grace):
            return {
                await stop.wait()
                if Task.isCancelled { return .stopDeadline }
                try? await Task.sleep(for: grace)
                return .stopDeadline
            }
        case .watchDeadline(let deadline): return after(deadline, .deadlinePassed)
        case .verify(let row):
            return {
                do {
                    return .result(try await RequestGate.$current.withValue(gate) { try await verify(row) })
                } catch is CancellationError {
                    return .abandoned
                } catch is GateClosed { return .cutOff }
            }
        case .watchRoom(let version):
            return {
                await gate.waitForChange(since: version)
                return .roomChanged
            }
        case .write(let batch, let checkpoint):
            return {
                let (rows, fatal) = await Task { await write(batch, checkpoint: checkpoint) }.value
                return .written(rows, fatal: fatal)
            }
        case .flushTimer(let interval): return after(interval, .flushDue)
        case .grace(let grace): return after(grace, .stopDeadline)
        }
    }

    /// A timer: `event` once `duration` has passed, or at once when cancelled.
    private func after(_ duration: Duration, _ event: PollRunMachine.Event) -> @Sendable () async throws -> PollRunMachine.Event {
        {
            try? await Task.sleep(for: duration)
            return event
        }
    }

    /// What the machine noted, as the run logs it; `done` is the rows counted so far.
    private func log(_ note: PollRunMachine.Note, done: Int) {
        switch note {
        case .deprecated(let notice):
            logger.warning("\(notice.backend) is deprecated by Apple", metadata: ["headers": "\(notice.headers)"])
        case .breakerTripped(let reason, let inFlight):
            logger.error("circuit breaker tripped: no more subscriptions are asked", metadata: ["reason": "\(reason)", "in_flight": "\(inFlight)"])
        case .deadlinePassed(let inFlight):
            logger.notice("deadline passed: no new subscription is started", metadata: ["done": "\(done)", "in_flight": "\(inFlight)"])
        case .abandoning(let inFlight):
            logger.notice("stop: abandoning requests still in flight", metadata: ["in_flight": "\(inFlight)"])
        }
    }

    /// What one row came to before anything is written.
    struct RowResult: Sendable {
        enum Decision: Sendable {
            indirect case adopt(
                SubscriptionState, otherChains: [SubscriptionState], latestReceipt: String?, status: UpstreamStatus, evidence: ChainEvidence,
                transactions: [SubscriptionTransaction] = [])
            case fail(VerificationFailure)
        }
        var row: SubscriptionRow
        var decision: Decision
        var stats: StatusLookup.Stats
    }

    /// Verifies and decides one row; no writes here, so many can run at once.
    func verify(_ row: SubscriptionRow) async throws -> RowResult {
        let lookup = try await source.status(of: row, logger: logger)
        switch lookup.result {
        case .credentialsRejected(let abort):
            throw abort
        case .failed(let failure):
            return RowResult(row: row, decision: .fail(failure), stats: lookup.stats)
        case .answered(let answer):
            switch EntitlementDecision.decide(answer: answer, row: row, bundleID: configuration.bundleID, nowMs: configuration.nowMs) {
            case .adopt(let state, let receipt, let otherChains, let evidence):
                return RowResult(
                    row: row, decision: .adopt(
                        state, otherChains: otherChains, latestReceipt: receipt, status: answer.upstreamStatus, evidence: evidence,
                        transactions: answer.transactions),
                    stats: lookup.stats)
            case .reject(var failure):
                failure.upstreamStatus = answer.upstreamStatus
                return RowResult(row: row, decision: .fail(failure), stats: lookup.stats)
            }
        }
    }
}
