import Synchronization

/// Keeps requests under the App Store Server API's limit: never more than `perSecond` sends in any
/// one-second window, the first second and retries included. Each request reserves a send time
/// at least a second after the one `perSecond` reservations before it, so any `perSecond + 1`
/// consecutive sends span a second or more. A 429 halves the rate for the rest of the run (once
/// per second at most, so one overload answered by many 429s counts once; never below a tenth of
/// the configured rate), and its `Retry-After` holds every request back until then.
public final class RequestRateLimiter: Sendable {
    struct State {
        var perSecond: Int
        /// The lowest a 429 can take the rate.
        let floor: Int
        var lastLowered: ContinuousClock.Instant?
        /// The last `perSecond` reserved send times, oldest first.
        var recent: [ContinuousClock.Instant] = []
        var notBefore: ContinuousClock.Instant?
    }

    private let state: Mutex<State>

    public init(perSecond: Int) {
        state = Mutex(State(perSecond: max(1, perSecond), floor: max(1, perSecond / 10)))
    }

    /// The rate in effect now.
    public var perSecond: Int { state.withLock { $0.perSecond } }

    /// Waits for this request's slot. Throws only `CancellationError`.
    public func acquire() async throws {
        let slot = reserve(now: .now)
        if slot > .now { try await Task.sleep(until: slot, clock: .continuous) }
    }

    /// Reserves the earliest send time at or after `now` that keeps the limit.
    func reserve(now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        state.withLock { state in
            var slot = max(now, state.notBefore ?? now, state.recent.last ?? now)
            if state.recent.count >= state.perSecond {
                slot = max(slot, state.recent[state.recent.count - state.perSecond] + .seconds(1))
            }
            state.recent.append(slot)
            if state.recent.count > state.perSecond { state.recent.removeFirst(state.recent.count - state.perSecond) }
            return slot
        }
    }

    /// Apple answered 429: half the rate from now on, and no request before `retryAfter` has passed.
    /// Returns the new rate.
    @discardableResult
    public func throttled(retryAfter: Duration?, now: ContinuousClock.Instant = .now) -> Int {
        state.withLock { state in
            if state.lastLowered.map({ now - $0 >= .seconds(1) }) ?? true {
                state.perSecond = max(state.floor, state.perSecond / 2)
                state.lastLowered = now
            }
            if let retryAfter { state.notBefore = max(state.notBefore ?? now, now + retryAfter) }
            return state.perSecond
        }
    }
}
