import Synchronization
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The gate between rows and requests: slots in arrival order up to the limit, a cancelled waiter
/// leaves the queue, a row backing off holds no slot, and answers move the limit. No test sleeps:
/// each waits for the gate's own state to change.
@Suite struct RequestGateTests {
    /// Yields until `condition` holds: the other tasks reach the gate, however slow the machine.
    func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    final class Served: Sendable {
        let names = Mutex<[String]>([])
    }

    @Test func slotsGoToWaitersInArrivalOrderUpToTheLimit() async throws {
        let gate = RequestGate(limit: ConcurrencyLimit(ceiling: 2))
        try await gate.acquire()
        try await gate.acquire()
        #expect(gate.snapshot.inFlight == 2)
        let order = Served()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in ["first", "second"] {
                let queued = gate.snapshot.waiting
                group.addTask {
                    try await gate.acquire()
                    order.names.withLock { $0.append(name) }
                }
                await until { gate.snapshot.waiting == queued + 1 }
            }
            gate.release(.calm)
            await until { order.names.withLock { $0.count } == 1 }
            #expect(gate.snapshot.inFlight == 2)
            gate.release(.calm)
            try await group.waitForAll()
        }
        #expect(order.names.withLock { $0 } == ["first", "second"])
        #expect(gate.snapshot.inFlight == 2)
        #expect(gate.snapshot.waiting == 0)
    }

    @Test func aCancelledWaiterLeavesTheQueue() async throws {
        let gate = RequestGate(limit: ConcurrencyLimit(ceiling: 1))
        try await gate.acquire()
        let waiter = Task { try await gate.acquire() }
        await until { gate.snapshot.waiting == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(gate.snapshot.waiting == 0)
        gate.release(nil)
        #expect(gate.snapshot.inFlight == 0)
    }

    /// At a limit of one, a request goes out while another row sleeps out its backoff; the run's
    /// watch on the gate wakes when the row begins backing off.
    @Test func aRowBackingOffHoldsNoSlot() async throws {
        let gate = RequestGate(limit: ConcurrencyLimit(ceiling: 1))
        let before = gate.snapshot.version
        let sleeper = Task {
            try await RequestGate.$current.withValue(gate) {
                _ = try await RequestGate.send { ((), AnswerSignal.transient(.httpStatus)) }
                try await RequestGate.backOff(for: .seconds(3600))
            }
        }
        await gate.waitForChange(since: before)
        #expect(gate.snapshot.backingOff == 1)
        #expect(gate.snapshot.inFlight == 0)
        let answer = try await RequestGate.$current.withValue(gate) {
            try await RequestGate.send { ("answered", AnswerSignal.calm) }
        }
        #expect(answer == "answered")
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(gate.snapshot.backingOff == 0)
        #expect(gate.snapshot.limit.throttled == 1)
    }

    /// Every answer reaches the limit: a 429 halves it, and a request that failed without an
    /// answer (cancelled) gives its slot back without a signal.
    @Test func answersMoveTheLimit() async throws {
        let gate = RequestGate(limit: ConcurrencyLimit(ceiling: 8))
        try await RequestGate.$current.withValue(gate) {
            _ = try await RequestGate.send { ((), AnswerSignal.overload) }
            await #expect(throws: CancellationError.self) {
                try await RequestGate.send { () -> ((), AnswerSignal) in throw CancellationError() }
            }
        }
        #expect(gate.snapshot.limit.current == 4)
        #expect(gate.snapshot.limit.throttled == 1)
        #expect(gate.snapshot.inFlight == 0)
    }

    /// The breaker counts each answer at the gate and closes it the moment it trips: a request
    /// waiting for a slot is refused, a row sleeping out an hour's backoff wakes at once, and no
    /// request leaves after — a retry included.
    @Test func theBreakerClosesTheGateOnAnswers() async throws {
        let gate = RequestGate(limit: ConcurrencyLimit(ceiling: 1), breaker: CircuitBreaker(window: 2, threshold: 1))
        let sleeper = Task {
            try await RequestGate.$current.withValue(gate) {
                _ = try await RequestGate.send { ((), AnswerSignal.transient(.timeout)) }
                try await RequestGate.backOff(for: .seconds(3600))
            }
        }
        await until { gate.snapshot.backingOff == 1 }
        try await gate.acquire()
        let waiter = Task { try await gate.acquire() }
        await until { gate.snapshot.waiting == 1 }
        #expect(gate.snapshot.closed == nil)
        gate.release(.transient(.httpStatus))
        await #expect(throws: GateClosed.self) { try await waiter.value }
        await #expect(throws: GateClosed.self) { try await sleeper.value }
        let reason = try #require(gate.snapshot.closed)
        #expect(reason.hasPrefix("circuit breaker: 2 of the last 2 requests failed in a way that may pass ("), "\(reason)")
        #expect(reason.contains("http_status 1") && reason.contains("timeout 1"))
        await #expect(throws: GateClosed(reason: reason)) {
            try await RequestGate.$current.withValue(gate) { try await RequestGate.send { ((), AnswerSignal.calm) } }
        }
        await #expect(throws: GateClosed(reason: reason)) {
            try await RequestGate.$current.withValue(gate) { try await RequestGate.backOff(for: .zero) }
        }
        #expect(gate.snapshot.inFlight == 0)
        #expect(gate.snapshot.backingOff == 0)
        #expect(gate.snapshot.waiting == 0)
    }

    /// A request to slow down is the concurrency's business, not the breaker's; the run closes the
    /// gate itself when the breaker trips on finished rows.
    @Test func overloadsDoNotTripItAndTheRunCanCloseIt() async throws {
        let gate = RequestGate(limit: ConcurrencyLimit(ceiling: 4), breaker: CircuitBreaker(window: 2, threshold: 1))
        for _ in 0..<4 { try await gate.acquire() }
        for _ in 0..<4 { gate.release(.overload) }
        #expect(gate.snapshot.closed == nil)
        gate.close("tripped on rows")
        gate.close("a second reason")
        #expect(gate.snapshot.closed == "tripped on rows")
        await #expect(throws: GateClosed(reason: "tripped on rows")) { try await gate.acquire() }
    }

    /// Without a gate (a one-off verification, a test of a backend) nothing waits.
    @Test func withoutAGateRequestsGoAtOnce() async throws {
        #expect(RequestGate.current == nil)
        let answer = try await RequestGate.send { (42, AnswerSignal.overload) }
        #expect(answer == 42)
        try await RequestGate.backOff(for: .zero)
    }
}
