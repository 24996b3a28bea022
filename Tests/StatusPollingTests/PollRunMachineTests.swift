import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The run's decisions, event by event: no task, no clock, no store. Each test is the script a
/// driver would follow, with the exact actions the machine answers at every step.
@Suite struct PollRunMachineTests {
    typealias Machine = PollRunMachine

    /// An action as a test compares it: rows and batches by id.
    enum Step: Equatable {
        case watchForStop(Duration), watchDeadline(Duration), verify(Int64), watchRoom(UInt64), flushTimer(Duration), grace(Duration)
        case write([Int64], through: Int64)
        case log(Machine.Note)
        case cancelTasks, closeGate(String), count([Int64]), reportProgress, checkRoom, takeRow, awaitEvent, awaitPeers
        case writeRemaining([Int64], through: Int64)
        case finish(Machine.Ending)

        init(_ action: Machine.Action) {
            switch action {
            case .start(.watchForStop(let grace)): self = .watchForStop(grace)
            case .start(.watchDeadline(let deadline)): self = .watchDeadline(deadline)
            case .start(.verify(let row)): self = .verify(row.id)
            case .start(.watchRoom(let version)): self = .watchRoom(version)
            case .start(.write(let batch, let checkpoint)): self = .write(batch.map(\.row.id), through: checkpoint)
            case .start(.flushTimer(let interval)): self = .flushTimer(interval)
            case .start(.grace(let grace)): self = .grace(grace)
            case .log(let note): self = .log(note)
            case .cancelTasks: self = .cancelTasks
            case .closeGate(let reason): self = .closeGate(reason)
            case .count(let rows): self = .count(rows.map(\.row.id))
            case .reportProgress: self = .reportProgress
            case .checkRoom: self = .checkRoom
            case .takeRow: self = .takeRow
            case .awaitEvent: self = .awaitEvent
            case .awaitPeers: self = .awaitPeers
            case .writeRemaining(let batch, let checkpoint): self = .writeRemaining(batch.map(\.row.id), through: checkpoint)
            case .finish(let ending): self = .finish(ending)
            }
        }
    }

    static let flush = Step.flushTimer(.milliseconds(50))
    static let grace = Step.grace(.seconds(3))

    static func configuration(concurrency: Int, batchSize: Int, breaker: CircuitBreaker? = nil, deadline: Duration? = nil, resumeAfter: Int64 = 0) -> PollRun.Configuration {
        PollRun.Configuration(
            bundleID: "com.example.premium", nowMs: 0, concurrency: concurrency, batchSize: batchSize, flushInterval: .milliseconds(50),
            resumeAfter: resumeAfter, stopGrace: .seconds(3), circuitBreaker: breaker, deadline: deadline)
    }

    static func row(_ id: Int64) -> SubscriptionRow { SubscriptionRow(id: id, userID: "u\(id)", latestReceipt: "R\(id)", state: .unverified) }

    static func adopted(_ id: Int64, deprecation: DeprecationNotice? = nil) -> Machine.Event {
        var stats = StatusLookup.Stats()
        stats.deprecation = deprecation
        let decision = PollRun.RowResult.Decision.adopt(
            .unverified, otherChains: [], latestReceipt: nil, status: UpstreamStatus(backend: .verifyReceipt, code: 0), evidence: ChainEvidence())
        return .result(PollRun.RowResult(row: row(id), decision: decision, stats: stats))
    }

    static func failed(_ id: Int64, _ reason: VerificationFailure.Reason) -> Machine.Event {
        .result(PollRun.RowResult(row: row(id), decision: .fail(VerificationFailure(reason, "x", isTransient: true)), stats: StatusLookup.Stats()))
    }

    static func written(_ ids: [Int64], fatal: StoreError? = nil) -> Machine.Event {
        .written(ids.map { PollRun.WrittenRow(row: row($0), decision: .fail(VerificationFailure(.timeout, "x")), stats: StatusLookup.Stats(), outcome: .storeError("x")) }, fatal: fatal)
    }

    static func room(_ limit: Int, backingOff: Int = 0, version: UInt64 = 0, closed: String? = nil) -> Machine.Event {
        .room(limit: limit, backingOff: backingOff, version: version, closed: closed)
    }

    static func breakerMessage(_ transient: Int, of window: Int, _ mix: String, counting counted: String = "subscriptions") -> String {
        "circuit breaker: \(transient) of the last \(window) \(counted) failed in a way that may pass (\(mix)); the App Store looks unavailable, "
            + "so no more were asked. Nothing was taken away: rows not reached keep their columns and the next run selects them as usual "
            + "(a backfill continues with `--resume`)"
    }

    /// Starts the rows `ids` through the gate at `limit`, each step as the driver sees it.
    static func start(_ ids: [Int64], _ machine: inout Machine, limit: Int) {
        for id in ids {
            #expect(machine.steps(room(limit)) == [.takeRow])
            #expect(machine.steps(.nextRow(row(id))) == [.verify(id), .checkRoom])
        }
    }

    @Test func aNightRunsFromTheFirstRowToItsEnd() {
        var machine = Machine(Self.configuration(concurrency: 2, batchSize: 2))
        #expect(machine.steps(.began) == [.watchForStop(.seconds(3)), .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(Self.row(1))) == [.verify(1), .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(Self.row(2))) == [.verify(2), .checkRoom])
        // Two requests fill the gate: the run watches it and waits.
        #expect(machine.steps(Self.room(2)) == [.watchRoom(0), .awaitEvent])
        // Less than a batch waits for the flush timer.
        #expect(machine.steps(Self.adopted(1)) == [Self.flush, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(Self.row(3))) == [.verify(3), .checkRoom])
        #expect(machine.steps(Self.room(2, version: 1)) == [.awaitEvent])
        // A full batch goes to the writer at once, through the last row handed over.
        #expect(machine.steps(Self.adopted(2)) == [.write([1, 2], through: 2), .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitEvent])
        #expect(machine.steps(.roomChanged) == [.checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitEvent])
        // The writer is busy and the first timer has not fired yet: no second timer.
        #expect(machine.steps(Self.adopted(3)) == [.checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitEvent])
        #expect(machine.steps(Self.written([1, 2])) == [.count([1, 2]), .reportProgress, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        // Nothing in flight, nothing being written: the last answer is written without waiting for the timer.
        #expect(machine.steps(.nextRow(nil)) == [.write([3], through: 3), .awaitEvent])
        #expect(machine.steps(.flushDue) == [.checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitEvent])
        #expect(machine.steps(Self.written([3])) == [.count([3]), .reportProgress, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitPeers])
        #expect(machine.steps(.peersAwaited(rowFree: false)) == [.cancelTasks, .finish(.finished)])
        #expect(machine.checkpoint == 3)
        #expect(machine.abandoned == 0)
    }

    @Test func theFlushTimerWritesWhatWaitsOnceTheWriterIsFree() {
        var machine = Machine(Self.configuration(concurrency: 4, batchSize: 10))
        _ = machine.handle(.began)
        Self.start([1, 2, 3], &machine, limit: 4)
        #expect(machine.steps(Self.adopted(2)) == [Self.flush, .checkRoom])
        #expect(machine.steps(.flushDue) == [.write([2], through: 0), .checkRoom])
        #expect(machine.steps(Self.adopted(1)) == [Self.flush, .checkRoom])
        // The writer is busy: the answer waits, and the timer is armed again once the batch is written.
        #expect(machine.steps(.flushDue) == [.checkRoom])
        #expect(machine.steps(Self.written([2])) == [.count([2]), .reportProgress, Self.flush, .checkRoom])
        #expect(machine.steps(.flushDue) == [.write([1], through: 2), .checkRoom])
    }

    @Test func theCheckpointPassesOnlyRowsFinishedWithoutAGap() {
        var machine = Machine(Self.configuration(concurrency: 3, batchSize: 1, resumeAfter: 10))
        #expect(machine.checkpoint == 10)
        _ = machine.handle(.began)
        Self.start([11, 12, 13], &machine, limit: 3)
        // 13 is done, but 11 and 12 are not: the checkpoint stays below them.
        #expect(machine.steps(Self.adopted(13)) == [.write([13], through: 10), .checkRoom])
        #expect(machine.steps(Self.adopted(11)) == [Self.flush, .checkRoom])
        #expect(machine.steps(Self.written([13])) == [.count([13]), .reportProgress, .write([11], through: 11), .checkRoom])
        #expect(machine.steps(Self.adopted(12)) == [.checkRoom])
        #expect(machine.steps(Self.written([11])) == [.count([11]), .reportProgress, .write([12], through: 13), .checkRoom])
        #expect(machine.checkpoint == 13)
    }

    /// Batches of one at concurrency 1: beside the batch being written, at most max(1, 1) answer
    /// waits for the writer.
    @Test func noRowStartsWhileABatchOfAnswersWaits() {
        var machine = Machine(Self.configuration(concurrency: 1, batchSize: 1))
        _ = machine.handle(.began)
        Self.start([1], &machine, limit: 1)
        #expect(machine.steps(Self.adopted(1)) == [.write([1], through: 1), .checkRoom])
        Self.start([2], &machine, limit: 1)
        #expect(machine.steps(Self.room(1)) == [.watchRoom(0), .awaitEvent])
        #expect(machine.steps(Self.adopted(2)) == [Self.flush, .checkRoom])
        // The gate has room, but an answer waits behind the batch being written: the run waits for the writer.
        #expect(machine.steps(Self.room(1)) == [.awaitEvent])
        #expect(machine.steps(Self.written([1])) == [.count([1]), .reportProgress, .write([2], through: 2), .checkRoom])
        #expect(machine.steps(Self.room(1)) == [.takeRow])
    }

    /// At concurrency 1 a row sleeping out a backoff holds no request, so another starts; but no
    /// more than 2 × 1 + 16 rows are started and not finished.
    @Test func rowsBackingOffMakeRoomUpToTheBoundOfRowsInProgress() {
        var machine = Machine(Self.configuration(concurrency: 1, batchSize: 100))
        _ = machine.handle(.began)
        Self.start([1], &machine, limit: 1)
        #expect(machine.steps(Self.room(1, version: 4)) == [.watchRoom(4), .awaitEvent])
        #expect(machine.steps(.roomChanged) == [.checkRoom])
        for id in Int64(2)...18 {
            #expect(machine.steps(Self.room(1, backingOff: Int(id) - 1, version: 5)) == [.takeRow])
            #expect(machine.steps(.nextRow(Self.row(id))) == [.verify(id), .checkRoom])
        }
        #expect(machine.steps(Self.room(1, backingOff: 18, version: 9)) == [.watchRoom(9), .awaitEvent])
    }

    @Test func theBreakerTripsOnceAndTheRunEndsAborted() {
        var machine = Machine(Self.configuration(concurrency: 3, batchSize: 10, breaker: CircuitBreaker(window: 2, threshold: 1)))
        _ = machine.handle(.began)
        Self.start([1, 2, 3], &machine, limit: 3)
        #expect(machine.steps(Self.room(3)) == [.watchRoom(0), .awaitEvent])
        #expect(machine.steps(Self.failed(1, .timeout)) == [Self.flush, .checkRoom])
        Self.start([4], &machine, limit: 3)
        let tripped = Self.breakerMessage(2, of: 2, "timeout 1, transport 1")
        // Tripped on finished rows: the gate closes, so the rows in progress send no retry.
        #expect(machine.steps(Self.failed(2, .transport)) == [.log(.breakerTripped(tripped, inFlight: 2)), .closeGate(tripped), Self.grace, .checkRoom])
        // Room in the gate, but the run starts no new row.
        #expect(machine.steps(Self.room(3, closed: tripped)) == [.awaitEvent])
        // Logged, closed and given a grace period once, however many failures keep the share up.
        #expect(machine.steps(Self.failed(3, .transport)) == [.checkRoom])
        #expect(machine.steps(Self.room(3, closed: tripped)) == [.awaitEvent])
        #expect(machine.steps(Self.adopted(4)) == [.checkRoom])
        #expect(machine.steps(Self.room(3, closed: tripped)) == [.cancelTasks, .writeRemaining([1, 2, 3, 4], through: 4)])
        #expect(machine.steps(Self.written([1, 2, 3, 4])) == [.count([1, 2, 3, 4]), .finish(.aborted(tripped))])
        #expect(machine.checkpoint == 4)
    }

    /// The gate closed itself on answers: the machine hears it with the room, logs it once, starts
    /// no row; rows the gate sent no retry for end unfinished, before the checkpoint and unwritten.
    @Test func theGateTrippingOnAnswersEndsTheRunAborted() {
        var machine = Machine(Self.configuration(concurrency: 3, batchSize: 10, breaker: CircuitBreaker(window: 4, threshold: 1)))
        _ = machine.handle(.began)
        Self.start([1, 2, 3], &machine, limit: 3)
        let tripped = Self.breakerMessage(4, of: 4, "http_status 4", counting: "requests")
        #expect(machine.steps(Self.room(3, backingOff: 2, version: 7, closed: tripped)) == [.log(.breakerTripped(tripped, inFlight: 3)), Self.grace, .awaitEvent])
        #expect(machine.steps(.cutOff) == [.checkRoom])
        #expect(machine.steps(Self.room(3, closed: tripped)) == [.awaitEvent])
        #expect(machine.steps(Self.adopted(3)) == [Self.flush, .checkRoom])
        #expect(machine.steps(Self.room(3, closed: tripped)) == [.awaitEvent])
        #expect(machine.steps(.cutOff) == [.checkRoom])
        #expect(machine.steps(Self.room(3, closed: tripped)) == [.cancelTasks, .writeRemaining([3], through: 0)])
        #expect(machine.steps(Self.written([3])) == [.count([3]), .finish(.aborted(tripped))])
        #expect(machine.cutOff == 2)
        #expect(machine.checkpoint == 0)
    }

    /// An accepted answer takes a place in the breaker's window: fail, adopt, fail is 1 of the last 2.
    @Test func anAcceptedAnswerKeepsTheBreakerClosed() {
        var machine = Machine(Self.configuration(concurrency: 3, batchSize: 10, breaker: CircuitBreaker(window: 2, threshold: 1)))
        _ = machine.handle(.began)
        Self.start([1, 2, 3], &machine, limit: 3)
        #expect(machine.steps(Self.failed(1, .timeout)) == [Self.flush, .checkRoom])
        #expect(machine.steps(Self.room(3)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitEvent])
        #expect(machine.steps(Self.adopted(2)) == [.checkRoom])
        #expect(machine.steps(Self.room(3)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitEvent])
        #expect(machine.steps(Self.failed(3, .timeout)) == [.checkRoom])
        #expect(machine.steps(Self.room(3)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.write([1, 2, 3], through: 3), .awaitEvent])
        #expect(machine.steps(Self.written([1, 2, 3])) == [.count([1, 2, 3]), .reportProgress, .checkRoom])
        #expect(machine.steps(Self.room(3)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitPeers])
        #expect(machine.steps(.peersAwaited(rowFree: false)) == [.cancelTasks, .finish(.finished)])
    }

    @Test func aStopMidRunStartsNoRowAndWritesWhatCameBack() {
        var machine = Machine(Self.configuration(concurrency: 2, batchSize: 10, deadline: .seconds(60)))
        #expect(machine.steps(.began) == [.watchForStop(.seconds(3)), .watchDeadline(.seconds(60)), .checkRoom])
        Self.start([1, 2], &machine, limit: 2)
        #expect(machine.steps(.stopRequested) == [])
        #expect(machine.steps(Self.adopted(2)) == [Self.flush, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.awaitEvent])
        // A stop request already gave the grace period: the deadline adds none.
        #expect(machine.steps(.deadlinePassed) == [.log(.deadlinePassed(inFlight: 1)), .awaitEvent])
        #expect(machine.steps(.stopDeadline) == [.log(.abandoning(inFlight: 1)), .cancelTasks, .awaitEvent])
        // Unwritten answers are written as the run closes; the abandoned row holds the checkpoint.
        #expect(machine.steps(.abandoned) == [.cancelTasks, .writeRemaining([2], through: 0)])
        #expect(machine.steps(Self.written([2])) == [.count([2]), .finish(.stopped)])
        #expect(machine.abandoned == 1)
        #expect(machine.checkpoint == 0)
    }

    @Test func aStopBeforeTheFirstRowStartsNone() {
        var machine = Machine(Self.configuration(concurrency: 4, batchSize: 10))
        #expect(machine.steps(.began) == [.watchForStop(.seconds(3)), .checkRoom])
        #expect(machine.steps(.stopRequested) == [])
        #expect(machine.steps(Self.room(4)) == [.cancelTasks, .finish(.stopped)])
    }

    @Test func theDeadlineStopsStartingRowsAndTheRunEndsInterrupted() {
        var machine = Machine(Self.configuration(concurrency: 2, batchSize: 10, deadline: .seconds(2)))
        #expect(machine.steps(.began) == [.watchForStop(.seconds(3)), .watchDeadline(.seconds(2)), .checkRoom])
        Self.start([1, 2], &machine, limit: 2)
        #expect(machine.steps(.deadlinePassed) == [.log(.deadlinePassed(inFlight: 2)), Self.grace, .awaitEvent])
        #expect(machine.steps(Self.adopted(1)) == [Self.flush, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.awaitEvent])
        #expect(machine.steps(.stopDeadline) == [.log(.abandoning(inFlight: 1)), .cancelTasks, .awaitEvent])
        // The cancelled stop watcher hands back its event too.
        #expect(machine.steps(.stopDeadline) == [.log(.abandoning(inFlight: 1)), .cancelTasks, .awaitEvent])
        #expect(machine.steps(.abandoned) == [.cancelTasks, .writeRemaining([1], through: 1)])
        #expect(machine.steps(Self.written([1])) == [.count([1]), .finish(.deadlineReached)])
        #expect(machine.abandoned == 1)
    }

    @Test func aStopRequestOutranksTheRunsOwnHalt() {
        var machine = Machine(Self.configuration(concurrency: 2, batchSize: 10, deadline: .seconds(2)))
        _ = machine.handle(.began)
        Self.start([1], &machine, limit: 2)
        #expect(machine.steps(.deadlinePassed) == [.log(.deadlinePassed(inFlight: 1)), Self.grace, .awaitEvent])
        #expect(machine.steps(.stopRequested) == [])
        #expect(machine.steps(Self.adopted(1)) == [Self.flush, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.cancelTasks, .writeRemaining([1], through: 1)])
        #expect(machine.steps(Self.written([1])) == [.count([1]), .finish(.stopped)])
    }

    @Test func aFailedDatabaseStopsTheRunAndEndsItAborted() {
        var machine = Machine(Self.configuration(concurrency: 2, batchSize: 1))
        _ = machine.handle(.began)
        Self.start([1, 2], &machine, limit: 2)
        #expect(machine.steps(Self.adopted(1)) == [.write([1], through: 1), .checkRoom])
        #expect(machine.steps(Self.adopted(2)) == [Self.flush, .checkRoom])
        let full = StoreError.unwritable(path: "/tmp/db.sqlite", reason: "disk full")
        #expect(machine.steps(Self.written([1], fatal: full)) == [.count([1]), Self.grace, .reportProgress, .write([2], through: 2), .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.awaitEvent])
        // A second failure does not change why the run stopped, nor give another grace period.
        let busy = StoreError.busy(path: "/tmp/db.sqlite", seconds: 5)
        #expect(machine.steps(Self.written([2], fatal: busy)) == [.count([2]), .reportProgress, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.cancelTasks, .finish(.aborted(full.description))])
    }

    @Test func deprecationIsLoggedOncePerRun() {
        var machine = Machine(Self.configuration(concurrency: 2, batchSize: 10))
        _ = machine.handle(.began)
        Self.start([1, 2], &machine, limit: 2)
        let notice = DeprecationNotice(backend: .verifyReceipt, headers: "Deprecation: true")
        #expect(machine.steps(Self.adopted(1, deprecation: notice)) == [.log(.deprecated(notice)), Self.flush, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitEvent])
        #expect(machine.steps(Self.adopted(2, deprecation: notice)) == [.checkRoom])
    }

    /// A leasing store: once its rows are written the run waits for those other workers hold, and
    /// starts one that comes free (its worker died).
    @Test func aRowFreedByAPeerIsStarted() {
        var machine = Machine(Self.configuration(concurrency: 2, batchSize: 10))
        #expect(machine.steps(.began) == [.watchForStop(.seconds(3)), .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitPeers])
        #expect(machine.steps(.peersAwaited(rowFree: true)) == [.checkRoom])
        Self.start([7], &machine, limit: 2)
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitEvent])
        #expect(machine.steps(Self.adopted(7)) == [Self.flush, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.write([7], through: 7), .awaitEvent])
        #expect(machine.steps(Self.written([7])) == [.count([7]), .reportProgress, .checkRoom])
        #expect(machine.steps(Self.room(2)) == [.takeRow])
        #expect(machine.steps(.nextRow(nil)) == [.awaitPeers])
        #expect(machine.steps(.peersAwaited(rowFree: false)) == [.cancelTasks, .finish(.finished)])
    }
}

extension PollRunMachine {
    /// Handles `event`; the actions as a test compares them.
    mutating func steps(_ event: Event) -> [PollRunMachineTests.Step] { handle(event).map(PollRunMachineTests.Step.init) }
}
