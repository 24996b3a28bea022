import Synchronization

/// The run's requests in flight: at most the ``ConcurrencyLimit``'s current value, fed by every
/// answer. A row takes a slot for each request and gives it back with the answer's
/// ``AnswerSignal``; a row sleeping out a retry's backoff holds no slot, so a retry costs its
/// request, not a request's worth of waiting.
///
/// The gate also feeds the run's ``CircuitBreaker`` each answer, and closes once it trips (or the
/// run closes it): no request leaves after that, a retry included — a request waiting for a slot,
/// about to go out or sleeping out a backoff gets ``GateClosed`` at once — so what an outage costs
/// is bounded in requests sent.
///
/// The run binds its gate to ``current`` around each row; a backend sends through
/// ``send(_:)`` and waits through ``backOff(for:)``, which without a gate (a test, a one-off
/// verification) send at once and simply sleep. Waiters are served in arrival order.
public final class RequestGate: Sendable {
    /// The gate of the run this task verifies a row for, if any.
    @TaskLocal public static var current: RequestGate?

    struct State {
        var limit: ConcurrencyLimit
        var inFlight = 0
        /// Slots given out: the requests sent, those of rows never written included.
        var sent = 0
        /// Rows sleeping out a backoff.
        var backingOff = 0
        /// Requests waiting for a slot, oldest first.
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextWaiter: UInt64 = 0
        /// Bumped whenever the run may start another row: a row began backing off, the limit grew.
        var version: UInt64 = 0
        var watcher: CheckedContinuation<Void, Never>?
        /// The breaker's count of answers (nil: no breaker).
        var breaker: CircuitBreaker.Record?
        /// Why no request leaves any more (nil: open).
        var closed: String?
        /// Rows sleeping out a backoff, woken when the gate closes.
        var sleepers: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state: Mutex<State>

    package init(limit: ConcurrencyLimit, breaker: CircuitBreaker? = nil) {
        state = Mutex(State(limit: limit, breaker: breaker.map { CircuitBreaker.Record($0, counting: "requests") }))
    }

    /// What the run reads to decide whether to start a row, and for its report.
    package struct Snapshot {
        package var limit: ConcurrencyLimit
        package var inFlight: Int
        package var backingOff: Int
        /// Requests waiting for a slot.
        package var waiting: Int
        package var version: UInt64
        /// Why the gate closed (the breaker's message), nil while open.
        package var closed: String?
        /// Requests let out so far.
        package var sent: Int
    }

    package var snapshot: Snapshot {
        state.withLock {
            Snapshot(limit: $0.limit, inFlight: $0.inFlight, backingOff: $0.backingOff, waiting: $0.waiters.count, version: $0.version, closed: $0.closed, sent: $0.sent)
        }
    }

    /// Sends one request in a slot of the current run's gate (at once without one). `body` returns
    /// its result and what the answer said about the store.
    public static func send<Result>(_ body: () async throws -> (Result, AnswerSignal)) async throws -> Result {
        guard let gate = current else { return try await body().0 }
        try await gate.acquire()
        do {
            let (result, signal) = try await body()
            gate.release(signal)
            return result
        } catch {
            gate.release(nil)
            throw error
        }
    }

    /// Sleeps out a retry's backoff without holding a slot; throws ``GateClosed`` at once when
    /// the gate closes meanwhile (the retry would not be sent).
    public static func backOff(for delay: Duration) async throws {
        guard let gate = current else { return try await Task.sleep(for: delay) }
        let id = try gate.state.withLock { state throws(GateClosed) -> UInt64 in
            if let closed = state.closed { throw GateClosed(reason: closed) }
            state.backingOff += 1
            state.bumpVersion()
            state.nextWaiter += 1
            return state.nextWaiter
        }
        defer { gate.state.withLock { $0.backingOff -= 1 } }
        let closed = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await Task.sleep(for: delay)
                return false
            }
            group.addTask { await gate.sleepUntilClosed(id) }
            let closed = try await group.next() ?? false
            group.cancelAll()
            return closed
        }
        if closed, let reason = gate.snapshot.closed { throw GateClosed(reason: reason) }
        try Task.checkCancellation()
    }

    /// Returns true once the gate closes, false when the task is cancelled first.
    private func sleepUntilClosed(_ id: UInt64) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.closed != nil || Task.isCancelled { return true }
                    state.sleepers[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
            return state.withLock { $0.closed != nil }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.resume()
        }
    }

    /// Lets no request out any more: the breaker tripped on finished rows (the gate closes itself
    /// when it trips on answers). The first reason holds.
    package func close(_ reason: String) {
        let woken = state.withLock { $0.close(reason) }
        woken.resume()
    }

    /// Waits for a slot. Throws `CancellationError` if the task is cancelled while waiting, and
    /// ``GateClosed`` once the gate is closed.
    func acquire() async throws {
        let id: UInt64? = try state.withLock { state throws(GateClosed) -> UInt64? in
            if let closed = state.closed { throw GateClosed(reason: closed) }
            if state.takeSlotIfFree() { return nil }
            state.nextWaiter += 1
            return state.nextWaiter
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked again under the lock that queues it: a slot freed since is not missed.
                let ready: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if let closed = state.closed { return .failure(GateClosed(reason: closed)) }
                    if state.takeSlotIfFree() { return .success(()) }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Gives a slot back; `signal` is nil when the request ended without an answer (cancelled).
    /// The breaker counts the answer: a failure that may pass, or not; a request to slow down is
    /// left to the concurrency.
    func release(_ signal: AnswerSignal?) {
        let woken = state.withLock { state -> Woken in
            state.inFlight -= 1
            if let signal {
                let before = state.limit.current
                state.limit.record(signal)
                if state.limit.current > before { state.bumpVersion() }
                let tripped: String?
                switch signal {
                case .transient(let reason): tripped = state.breaker?.record(transient: reason)
                case .calm: tripped = state.breaker?.record(transient: nil)
                case .overload: tripped = nil
                }
                if let tripped, state.closed == nil { return state.close(tripped) }
            }
            if state.closed != nil { return Woken() }
            var resumed: [CheckedContinuation<Void, any Error>] = []
            while !state.waiters.isEmpty, state.inFlight < state.limit.current {
                resumed.append(state.waiters.removeFirst().continuation)
                state.inFlight += 1
                state.sent += 1
            }
            return Woken(waiters: resumed.map { ($0, nil) })
        }
        woken.resume()
    }

    /// Returns once the gate has changed since `version` (at once if it already has), or when the
    /// task is cancelled.
    package func waitForChange(since version: UInt64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.version != version || Task.isCancelled { return true }
                    precondition(state.watcher == nil, "one watcher at a time")
                    state.watcher = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                let watcher = state.watcher
                state.watcher = nil
                return watcher
            }?.resume()
        }
    }
}

extension RequestGate {
    /// What a change of the gate wakes, resumed outside its lock: waiters (given a slot, or
    /// refused with the reason it closed) and rows sleeping out a backoff.
    struct Woken {
        var waiters: [(CheckedContinuation<Void, any Error>, GateClosed?)] = []
        var sleepers: [CheckedContinuation<Void, Never>] = []

        func resume() {
            for (continuation, closed) in waiters {
                if let closed { continuation.resume(throwing: closed) } else { continuation.resume() }
            }
            for sleeper in sleepers { sleeper.resume() }
        }
    }
}

extension RequestGate.State {
    /// Closes the gate for `reason` (the first holds): every waiter is refused, every sleeper woken.
    mutating func close(_ reason: String) -> RequestGate.Woken {
        guard closed == nil else { return RequestGate.Woken() }
        closed = reason
        let refused = GateClosed(reason: reason)
        let woken = RequestGate.Woken(waiters: waiters.map { ($0.continuation, refused) }, sleepers: Array(sleepers.values))
        waiters.removeAll()
        sleepers.removeAll()
        bumpVersion()
        return woken
    }

    /// Takes a slot when one is free and nobody waits for it.
    mutating func takeSlotIfFree() -> Bool {
        guard waiters.isEmpty, inFlight < limit.current else { return false }
        inFlight += 1
        sent += 1
        return true
    }

    mutating func bumpVersion() {
        version &+= 1
        watcher?.resume()
        watcher = nil
    }
}
