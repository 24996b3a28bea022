import Synchronization

/// Wakes a waiting deliverer early (PostgreSQL's NOTIFY of new events): a ring while nobody waits
/// is kept for the next wait, so none is lost between a pass and the wait after it.
public final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var next = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func ring() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.waiters.isEmpty { state.rung = true }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns at the next ring (at once if one came since the last wait), or when the task is cancelled.
    public func wait() async {
        let id = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
