import Synchronization

/// The run's requests in flight: at most the ``ConcurrencyLimit``'s current value, fed by every
/// answer. A row takes a slot for each request and gives it back with the answer's
/// ``AnswerSignal``; a row sleeping out a retry's backoff holds no slot, so a retry costs its
/// request, not a request's worth of waiting.
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
        /// Rows sleeping out a backoff.
        var backingOff = 0
        /// Requests waiting for a slot, oldest first.
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextWaiter: UInt64 = 0
        /// Bumped whenever the run may start another row: a row began backing off, the limit grew.
        var version: UInt64 = 0
        var watcher: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>

    init(limit: ConcurrencyLimit) {
        state = Mutex(State(limit: limit))
    }

    /// What the run reads to decide whether to start a row, and for its report.
    struct Snapshot {
        var limit: ConcurrencyLimit
        var inFlight: Int
        var backingOff: Int
        /// Requests waiting for a slot.
        var waiting: Int
        var version: UInt64
    }

    var snapshot: Snapshot {
        state.withLock { Snapshot(limit: $0.limit, inFlight: $0.inFlight, backingOff: $0.backingOff, waiting: $0.waiters.count, version: $0.version) }
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

    /// Sleeps out a retry's backoff without holding a slot.
    public static func backOff(for delay: Duration) async throws {
        guard let gate = current else { return try await Task.sleep(for: delay) }
        gate.state.withLock { state in
            state.backingOff += 1
            state.bumpVersion()
        }
        defer { gate.state.withLock { $0.backingOff -= 1 } }
        try await Task.sleep(for: delay)
    }

    /// Waits for a slot. Throws `CancellationError` if the task is cancelled while waiting.
    func acquire() async throws {
        let id: UInt64? = state.withLock { state in
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
    func release(_ signal: AnswerSignal?) {
        let resumed = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.inFlight -= 1
            if let signal {
                let before = state.limit.current
                state.limit.record(signal)
                if state.limit.current > before { state.bumpVersion() }
            }
            var resumed: [CheckedContinuation<Void, any Error>] = []
            while !state.waiters.isEmpty, state.inFlight < state.limit.current {
                resumed.append(state.waiters.removeFirst().continuation)
                state.inFlight += 1
            }
            return resumed
        }
        for continuation in resumed { continuation.resume() }
    }

    /// Returns once the gate has changed since `version` (at once if it already has), or when the
    /// task is cancelled.
    func waitForChange(since version: UInt64) async {
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

extension RequestGate.State {
    /// Takes a slot when one is free and nobody waits for it.
    mutating func takeSlotIfFree() -> Bool {
        guard waiters.isEmpty, inFlight < limit.current else { return false }
        inFlight += 1
        return true
    }

    mutating func bumpVersion() {
        version &+= 1
        watcher?.resume()
        watcher = nil
    }
}
