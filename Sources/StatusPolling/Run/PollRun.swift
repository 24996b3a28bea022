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
        var maxPending: Int { 2 * max(batchSize, concurrency) }
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

    /// What one child task of the pipeline hands back.
    enum Event: Sendable {
        case result(RowResult)
        /// A request abandoned after a stop request's grace period.
        case abandoned
        /// The stop request's grace period is over.
        case stopDeadline
        /// The run's `deadline` passed.
        case deadlinePassed
        /// The oldest pending result has waited `flushInterval`.
        case flushDue
        /// The gate may have room for another row: one began backing off, or the limit grew.
        case roomChanged
        /// A batch was written (or, in a dry run, checked); `fatal` when the database failed.
        case written([WrittenRow], fatal: StoreError?)
    }

    /// Why a run stopped starting rows of its own accord.
    enum Halt {
        /// The App Store failed for a sustained stretch; the message names the failure mix.
        case circuitBreaker(String)
        case deadline
        /// The database failed as a whole (a full disk); nothing more can be written.
        case storeFailed(String)
    }

    /// Runs to the end of the selection, or until stopped. Never throws: an abort (credentials
    /// rejected, the store unreadable) and an interruption are in the report, with the counts of what was done.
    public func run() async -> RunReport {
        let started = elapsed()
        var report = RunReport(nowMs: configuration.nowMs, dryRun: configuration.dryRun)
        var state = PipelineState(
            resumeAfter: configuration.resumeAfter, maxRate: configuration.maxRate, concurrency: configuration.concurrency,
            overload: configuration.overload)
        var breaker = configuration.circuitBreaker.map(CircuitBreaker.Record.init)
        /// Why the run itself stopped starting rows (the breaker tripped, the deadline passed).
        var halt: Halt?
        do {
            var rows = try await SelectionCursor.open(store: store, configuration: configuration)
            let total = rows.total
            report.skippedFresh = rows.skippedFresh
            try await withThrowingTaskGroup(of: Event.self) { group in
                let stop = self.stop
                let grace = configuration.stopGrace
                group.addTask {
                    await stop.wait()
                    if Task.isCancelled { return .stopDeadline }
                    try? await Task.sleep(for: grace)
                    return .stopDeadline
                }
                if let deadline = configuration.deadline {
                    group.addTask {
                        try? await Task.sleep(for: deadline)
                        return .deadlinePassed
                    }
                }
                /// Starts no new row; requests in flight get the stop's grace period.
                func haltRun(_ reason: Halt) {
                    guard halt == nil, !stop.isRequested else { return }
                    halt = reason
                    group.addTask {
                        try? await Task.sleep(for: grace)
                        return .stopDeadline
                    }
                }
                /// Rows started and not finished: in a request, waiting for one, or backing off.
                var rowsInProgress = 0
                let gate = state.gate
                var watchingRoom = false
                var pending: [RowResult] = []
                let maxPending = configuration.maxPending
                var writing = false
                var flushTimerArmed = false
                func startNext() async throws -> Bool {
                    guard !stop.isRequested, halt == nil, pending.count < maxPending, let row = try await rows.next() else { return false }
                    await state.pace()
                    state.checkpoints.dispatched(row.id)
                    group.addTask {
                        do {
                            return .result(try await RequestGate.$current.withValue(gate) { try await verify(row) })
                        } catch is CancellationError { return .abandoned }
                    }
                    rowsInProgress += 1
                    return true
                }
                /// Hands every pending result to the writer. The write runs in a task of its own,
                /// which a stop's cancellation does not reach, so a batch is never half-abandoned.
                func flush() {
                    let batch = pending
                    pending.removeAll(keepingCapacity: true)
                    let checkpoint = state.checkpoints.completed(batch.map(\.row.id))
                    writing = true
                    group.addTask {
                        let (rows, fatal) = await Task { await write(batch, checkpoint: checkpoint) }.value
                        return .written(rows, fatal: fatal)
                    }
                }
                func armFlushTimer() {
                    guard !flushTimerArmed, !pending.isEmpty else { return }
                    flushTimerArmed = true
                    let interval = configuration.flushInterval
                    group.addTask {
                        try? await Task.sleep(for: interval)
                        return .flushDue
                    }
                }
                /// Starts rows while the requests they may send fit the gate: rows backing off send
                /// none. When the gate is full, waits for it to change (a row backing off, the limit
                /// growing) as well as for answers.
                func fill() async throws {
                    while true {
                        let room = gate.snapshot
                        guard rowsInProgress - room.backingOff < room.limit.current, rowsInProgress < configuration.maxRowsInProgress else {
                            guard !watchingRoom, rowsInProgress > 0, halt == nil, !stop.isRequested else { return }
                            watchingRoom = true
                            group.addTask {
                                await gate.waitForChange(since: room.version)
                                return .roomChanged
                            }
                            return
                        }
                        guard try await startNext() else { return }
                    }
                }
                try await fill()
                // The outer loop: on a store shared by several workers, once this run's rows are
                // written, it waits for rows other workers still hold (one may have died).
                let deadlineAt = configuration.deadline.map { started + $0 }
                outer: while true {
                    while rowsInProgress > 0 || writing, let event = try await group.next() {
                        switch event {
                        case .result(let result):
                            rowsInProgress -= 1
                            if !state.deprecationLogged, let notice = result.stats.deprecation {
                                logger.warning("\(notice.backend) is deprecated by Apple", metadata: ["headers": "\(notice.headers)"])
                                state.deprecationLogged = true
                            }
                            pending.append(result)
                            if case .fail(let failure) = result.decision, let tripped = breaker?.record(failure) {
                                logger.error("circuit breaker tripped: no more subscriptions are asked", metadata: ["reason": "\(tripped)", "in_flight": "\(rowsInProgress)"])
                                haltRun(.circuitBreaker(tripped))
                            } else if case .adopt = result.decision {
                                _ = breaker?.record(nil)
                            }
                            if !writing, pending.count >= configuration.batchSize { flush() } else { armFlushTimer() }
                            try await fill()
                        case .flushDue:
                            flushTimerArmed = false
                            if !writing, !pending.isEmpty { flush() }
                            try await fill()
                        case .written(let written, let fatal):
                            writing = false
                            for row in written { count(row, into: &report) }
                            if let fatal { haltRun(.storeFailed(fatal.description)) }
                            progress(RunProgress(done: report.selected, total: total, failed: report.failed, elapsed: elapsed() - started))
                            if pending.count >= configuration.batchSize { flush() } else { armFlushTimer() }
                            try await fill()
                        case .roomChanged:
                            watchingRoom = false
                            try await fill()
                        case .abandoned:
                            rowsInProgress -= 1
                            report.abandoned += 1
                        case .deadlinePassed:
                            logger.notice("deadline passed: no new subscription is started", metadata: ["done": "\(report.selected)", "in_flight": "\(rowsInProgress)"])
                            haltRun(.deadline)
                        case .stopDeadline:
                            if rowsInProgress > 0 { logger.notice("stop: abandoning requests still in flight", metadata: ["in_flight": "\(rowsInProgress)"]) }
                            group.cancelAll()
                        }
                    }
                    if !pending.isEmpty, halt == nil, !stop.isRequested {
                        flush()
                        continue outer
                    }
                    guard halt == nil, !stop.isRequested,
                        try await rows.awaitPeers(stopping: { stop.isRequested || deadlineAt.map { elapsed() >= $0 } == true })
                    else { break outer }
                    try await fill()
                }
                group.cancelAll()
                if !pending.isEmpty {
                    let checkpoint = state.checkpoints.completed(pending.map(\.row.id))
                    let (rows, fatal) = await write(pending, checkpoint: checkpoint)
                    for row in rows { count(row, into: &report) }
                    if let fatal { haltRun(.storeFailed(fatal.description)) }
                    pending.removeAll()
                }
            }
            if stop.isRequested {
                report.interrupted = true
                logger.notice("run stopped on request", metadata: ["done": "\(report.selected)", "checkpoint": "\(state.checkpoints.checkpoint)"])
            } else if case .deadline = halt {
                report.interrupted = true
                report.deadlineReached = true
                logger.notice("run stopped at its deadline", metadata: ["done": "\(report.selected)", "checkpoint": "\(state.checkpoints.checkpoint)"])
            } else if case .circuitBreaker(let reason) = halt {
                report.aborted = reason
            } else if case .storeFailed(let reason) = halt {
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
        report.checkpoint = state.checkpoints.checkpoint
        let limit = state.gate.snapshot.limit
        report.throttled = limit.throttled
        report.lowestConcurrency = limit.lowest
        return report
    }

    /// What one row came to before anything is written.
    struct RowResult: Sendable {
        enum Decision: Sendable {
            case adopt(SubscriptionState, otherChains: [SubscriptionState], latestReceipt: String?, status: UpstreamStatus, evidence: ChainEvidence)
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
                    row: row, decision: .adopt(state, otherChains: otherChains, latestReceipt: receipt, status: answer.upstreamStatus, evidence: evidence),
                    stats: lookup.stats)
            case .reject(var failure):
                failure.upstreamStatus = answer.upstreamStatus
                return RowResult(row: row, decision: .fail(failure), stats: lookup.stats)
            }
        }
    }
}
