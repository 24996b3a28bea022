import Synchronization

/// The most requests that arrived within any one second, as a rate-limited server counts them:
/// the stand-in's check that a client's limiter holds at the receiver, scheduling jitter and all.
/// Arrivals are stamped when the handler starts, before the simulated latency.
public final class ArrivalWindow: Sendable {
    struct State {
        /// Arrivals of the last second, oldest first.
        var recent: [ContinuousClock.Instant] = []
        var total = 0
        var most = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Counts one arrival at `now`.
    public func arrived(at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            let cutoff = state.recent.firstIndex { now - $0 < .seconds(1) } ?? state.recent.endIndex
            state.recent.removeFirst(cutoff)
            state.recent.append(now)
            state.total += 1
            state.most = max(state.most, state.recent.count)
        }
    }

    /// The arrivals so far and the most in any one second; then starts counting afresh.
    public func take() -> (total: Int, mostInOneSecond: Int) {
        state.withLock { state in
            defer { state = State() }
            return (state.total, state.most)
        }
    }
}
