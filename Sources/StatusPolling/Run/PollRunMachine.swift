import AppStoreBackends
import EntitlementCore

/// The run's decisions, apart from the tasks that carry them out: when a row starts, when answers
/// go to the writer and with which checkpoint, when the run stops starting rows, and how it ends.
/// ``PollRun/run()`` tells it what happened (``Event``) and does what it answers (``Action``, in
/// order). Every step is a change of plain values, so the rules are tested without tasks or clocks.
///
/// Each answer ends with the one action that says what to tell the machine next: `.checkRoom`,
/// `.takeRow`, `.awaitEvent`, `.awaitPeers` or `.writeRemaining`, each answered by one event, or
/// `.finish`.
struct PollRunMachine {
    enum Event: Sendable {
        /// The selection is open.
        case began
        /// A stop was requested (SIGTERM, SIGINT, the host process). The driver says so before each
        /// event once it holds, so every decision reads it as it stands. No action of its own.
        case stopRequested
        /// The gate as it stands (after `.checkRoom`): requests allowed in flight, rows sleeping out
        /// a backoff, the gate's version, and why it closed (the breaker tripped on answers).
        case room(limit: Int, backingOff: Int, version: UInt64, closed: String? = nil)
        /// The cursor's next row (after `.takeRow`); nil when none is left, or none is free to lease now.
        /// Boxed (`indirect`), as `result` is: an event is held in every async frame of the loop and
        /// of each child task, and inline these two cases made it 1 KB to copy and keep there.
        indirect case nextRow(SubscriptionRow?)
        indirect case result(PollRun.RowResult)
        /// A request abandoned after a stop request's grace period.
        case abandoned
        /// A row ended unfinished: the gate closed before its next request (it keeps its columns).
        case cutOff
        /// The stop request's grace period is over.
        case stopDeadline
        /// The run's `deadline` passed.
        case deadlinePassed
        /// The oldest pending result has waited `flushInterval`.
        case flushDue
        /// The gate may have room for another row: one began backing off, or the limit grew.
        case roomChanged
        /// A batch was written (or, in a dry run, checked); `fatal` when the database failed.
        case written([PollRun.WrittenRow], fatal: StoreError?)
        /// Other workers' rows were waited for (after `.awaitPeers`): `rowFree` when one is free again.
        case peersAwaited(rowFree: Bool)
    }

    enum Action {
        /// Start a child task; it hands back one event.
        case start(ChildTask)
        case log(Note)
        /// Cancel every child task: requests in flight come back `.abandoned`, timers and watchers at once.
        case cancelTasks
        /// Let no request out of the gate any more, retries included; rows waiting for one come back `.cutOff`.
        case closeGate(String)
        /// Count the written rows in the report (and log what an operator needs).
        case count([PollRun.WrittenRow])
        /// Tell the progress callback where the run stands.
        case reportProgress
        /// Read the gate; tell `.room`.
        case checkRoom
        /// Take the cursor's next row; tell `.nextRow`.
        case takeRow
        /// Wait for the next child task to finish; tell its event.
        case awaitEvent
        /// Wait for rows other workers still hold (a leasing store); tell `.peersAwaited`.
        case awaitPeers
        /// Write what is left in the run's own task, the child tasks cancelled; tell `.written`.
        case writeRemaining([PollRun.RowResult], checkpoint: Int64)
        /// The run is over.
        case finish(Ending)
    }

    /// The child tasks of the pipeline, each named for the event it hands back.
    enum ChildTask {
        /// Wait for a stop request, then its grace period: `.stopDeadline`.
        case watchForStop(grace: Duration)
        /// `.deadlinePassed` after the run's deadline.
        case watchDeadline(Duration)
        /// Verify one row, once the `--max-rate` pacer gives a slot: `.result`, or `.abandoned`.
        indirect case verify(SubscriptionRow)
        /// `.roomChanged` once the gate changed since `version`.
        case watchRoom(since: UInt64)
        /// Write a batch with the run's checkpoint: `.written`. The write runs in a task of its own,
        /// which a stop's cancellation does not reach, so a batch is never half-abandoned.
        case write([PollRun.RowResult], checkpoint: Int64)
        /// `.flushDue` after the flush interval.
        case flushTimer(Duration)
        /// The grace requests in flight get once the run halts itself: `.stopDeadline` after it.
        case grace(Duration)
    }

    /// What the run logs; `inFlight` is the rows started and not finished.
    enum Note: Equatable {
        /// The backend's deprecation headers, once a run.
        case deprecated(DeprecationNotice)
        case breakerTripped(String, inFlight: Int)
        case deadlinePassed(inFlight: Int)
        case abandoning(inFlight: Int)
    }

    /// How the run ended, for the report and the exit code.
    enum Ending: Equatable {
        case finished
        /// Stopped on request: interrupted.
        case stopped
        /// Stopped at the deadline: interrupted.
        case deadlineReached
        /// The breaker tripped or the database failed; the message names why.
        case aborted(String)
    }

    /// Why a run stopped starting rows of its own accord.
    private enum Halt {
        /// The App Store failed for a sustained stretch; the message names the failure mix.
        case circuitBreaker(String)
        case deadline
        /// The database failed as a whole (a full disk); nothing more can be written.
        case storeFailed(String)
    }

    private let batchSize: Int
    private let maxPending: Int
    private let maxRowsInProgress: Int
    private let stopGrace: Duration
    private let flushInterval: Duration
    private let deadline: Duration?
    private var breaker: CircuitBreaker.Record?
    private var checkpoints: CheckpointTracker
    /// Rows started and not finished: in a request, waiting for one, or backing off.
    private var rowsInProgress = 0
    /// Answers waiting for the writer.
    private var pending: [PollRun.RowResult] = []
    private var writing = false
    private var flushTimerArmed = false
    private var watchingRoom = false
    private var deprecationLogged = false
    private var stopRequested = false
    private var halt: Halt?
    /// The pipeline is over; what was left is being written.
    private var closing = false
    /// Requests abandoned when the grace period ran out.
    private(set) var abandoned = 0
    /// Rows the closed gate sent no further request for.
    private(set) var cutOff = 0

    init(_ configuration: PollRun.Configuration) {
        batchSize = configuration.batchSize
        maxPending = configuration.maxPending
        maxRowsInProgress = configuration.maxRowsInProgress
        stopGrace = configuration.stopGrace
        flushInterval = configuration.flushInterval
        deadline = configuration.deadline
        breaker = configuration.circuitBreaker.map { CircuitBreaker.Record($0) }
        checkpoints = CheckpointTracker(after: configuration.resumeAfter)
    }

    /// Every selected row with an id up to this one is done.
    var checkpoint: Int64 { checkpoints.checkpoint }

    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .began:
            guard let deadline else { return [.start(.watchForStop(grace: stopGrace)), .checkRoom] }
            return [.start(.watchForStop(grace: stopGrace)), .start(.watchDeadline(deadline)), .checkRoom]
        case .stopRequested:
            stopRequested = true
            return []
        case .room(let limit, let backingOff, let version, let closed):
            // The gate closed itself: the breaker tripped on answers.
            let tripped = if let closed { trip(closed, closingGate: false) } else { [Action]() }
            return tripped + admit(limit: limit, backingOff: backingOff, version: version)
        case .nextRow(let row?):
            checkpoints.dispatched(row.id)
            rowsInProgress += 1
            return [.start(.verify(row)), .checkRoom]
        case .nextRow(nil):
            return next()
        case .result(let result):
            return take(result)
        case .abandoned:
            rowsInProgress -= 1
            abandoned += 1
            return next()
        case .cutOff:
            rowsInProgress -= 1
            cutOff += 1
            return [.checkRoom]
        case .stopDeadline:
            let note: [Action] = rowsInProgress > 0 ? [.log(.abandoning(inFlight: rowsInProgress))] : []
            return note + [.cancelTasks] + next()
        case .deadlinePassed:
            let note = Action.log(.deadlinePassed(inFlight: rowsInProgress))
            return [note] + halt(.deadline) + next()
        case .flushDue:
            flushTimerArmed = false
            return (!writing && !pending.isEmpty ? [flush()] : []) + [.checkRoom]
        case .roomChanged:
            watchingRoom = false
            return [.checkRoom]
        case .written(let rows, let fatal):
            writing = false
            var actions: [Action] = [.count(rows)]
            if let fatal { actions += halt(.storeFailed(fatal.description)) }
            if closing { return actions + [.finish(ending)] }
            return actions + [.reportProgress] + handOver() + [.checkRoom]
        case .peersAwaited(let rowFree):
            return rowFree ? [.checkRoom] : close()
        }
    }

    /// Starts rows while the requests they may send fit the gate: rows backing off send none. When
    /// the gate is full, watches it for a change (a row backing off, the limit growing) as well as
    /// waiting for answers.
    private mutating func admit(limit: Int, backingOff: Int, version: UInt64) -> [Action] {
        guard rowsInProgress - backingOff < limit, rowsInProgress < maxRowsInProgress else {
            guard !watchingRoom, rowsInProgress > 0, halt == nil, !stopRequested else { return next() }
            watchingRoom = true
            return [.start(.watchRoom(since: version))] + next()
        }
        guard !stopRequested, halt == nil, pending.count < maxPending else { return next() }
        return [.takeRow]
    }

    private mutating func take(_ result: PollRun.RowResult) -> [Action] {
        rowsInProgress -= 1
        var actions: [Action] = []
        if !deprecationLogged, let notice = result.stats.deprecation {
            actions.append(.log(.deprecated(notice)))
            deprecationLogged = true
        }
        pending.append(result)
        if case .fail(let failure) = result.decision, let tripped = breaker?.record(failure) {
            actions += trip(tripped, closingGate: true)
        } else if case .adopt = result.decision {
            _ = breaker?.record(nil)
        }
        return actions + handOver() + [.checkRoom]
    }

    /// The breaker tripped, on answers (the gate closed itself) or on finished rows (the gate is
    /// closed now): logged and halted once, unless the run already stops for another reason.
    private mutating func trip(_ reason: String, closingGate: Bool) -> [Action] {
        guard halt == nil, !stopRequested else { return [] }
        return [.log(.breakerTripped(reason, inFlight: rowsInProgress))] + (closingGate ? [.closeGate(reason)] : []) + halt(.circuitBreaker(reason))
    }

    /// Starts no new row; requests in flight get the stop's grace period. The first reason holds,
    /// and a stop request has already given one.
    private mutating func halt(_ reason: Halt) -> [Action] {
        guard halt == nil, !stopRequested else { return [] }
        halt = reason
        return [.start(.grace(stopGrace))]
    }

    /// A full batch goes to a free writer; anything less waits for the flush timer.
    private mutating func handOver() -> [Action] {
        if !writing, pending.count >= batchSize { return [flush()] }
        guard !flushTimerArmed, !pending.isEmpty else { return [] }
        flushTimerArmed = true
        return [.start(.flushTimer(flushInterval))]
    }

    /// Hands every pending result to the writer, with the checkpoint that holds once it is written.
    private mutating func flush() -> Action {
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        writing = true
        return .start(.write(batch, checkpoint: checkpoints.completed(batch.map(\.row.id))))
    }

    /// What follows once an event is dealt with: the next event while a row or a batch is out.
    /// With neither, unwritten answers go to the writer; then, on a store shared by several
    /// workers, the run waits for rows other workers still hold (one may have died); else it closes.
    private mutating func next() -> [Action] {
        if rowsInProgress > 0 || writing { return [.awaitEvent] }
        guard halt == nil, !stopRequested else { return close() }
        return pending.isEmpty ? [.awaitPeers] : [flush(), .awaitEvent]
    }

    /// Cancels what is left of the pipeline and writes the answers not yet written.
    private mutating func close() -> [Action] {
        closing = true
        guard !pending.isEmpty else { return [.cancelTasks, .finish(ending)] }
        let batch = pending
        pending.removeAll()
        return [.cancelTasks, .writeRemaining(batch, checkpoint: checkpoints.completed(batch.map(\.row.id)))]
    }

    /// A stop request comes first: the run stopped on request, whatever else happened.
    private var ending: Ending {
        if stopRequested { return .stopped }
        switch halt {
        case .deadline?: return .deadlineReached
        case .circuitBreaker(let reason)?, .storeFailed(let reason)?: return .aborted(reason)
        case nil: return .finished
        }
    }
}
