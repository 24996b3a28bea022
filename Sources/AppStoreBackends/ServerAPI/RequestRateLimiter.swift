import Synchronization

/// Keeps requests under the App Store Server API's limit: never more than `perSecond` in any
/// one-second window, the first second and retries included, as the server counts them.
///
/// Requests are spaced evenly, one every ``spacingWindow`` ÷ `perSecond` (a generic cell rate
/// algorithm with no burst): each reserves the next free slot in arrival order, and when its slot
/// comes it goes only if the request before it actually left at least one spacing earlier, else it
/// waits for that. A request that wakes late therefore delays the next ones instead of meeting them
/// in a burst, so any `perSecond + 1` consecutive requests leave ``spacingWindow`` apart or more
/// whatever the scheduling jitter. The window is a little more than a second because Apple counts
/// arrivals, not departures: a request that spends up to 100 ms less on the way than one sent
/// before it (a new connection for the first, a busy machine) must not put one more into a second
/// there. That margin costs a tenth of the top rate.
/// A 429 halves the rate for the rest of the run (once per second at most, so one overload
/// answered by many 429s counts once; never below a tenth of the configured rate), and its
/// `Retry-After` holds every request back until then.
///
/// With a ``SharedRate`` (workers of one PostgreSQL database), the rate is this worker's share:
/// `⌊rate ÷ N⌋` for the N workers the shared rate counts, and no request while it says wait.
public final class RequestRateLimiter: Sendable {
    struct State {
        var perSecond: Int
        /// The lowest a 429 can take the rate.
        let floor: Int
        var lastLowered: ContinuousClock.Instant?
        /// The next free slot (the algorithm's theoretical arrival time).
        var nextSlot: ContinuousClock.Instant?
        /// When the last request actually left.
        var lastSent: ContinuousClock.Instant?
        var notBefore: ContinuousClock.Instant?

        /// This worker's rate when the rate is shared by `workers`.
        func share(of workers: Int) -> Int { max(1, perSecond / workers) }
    }

    /// What `perSecond + 1` consecutive requests span at least: a second and the 100 ms by which
    /// one request's way to Apple may be shorter than an earlier one's.
    public static let spacingWindow: Duration = .milliseconds(1100)

    /// The least time between two requests when `workers` share the rate: the spacing window ÷ the
    /// rate alone, the shared rate's spacing window ÷ this worker's share otherwise.
    private func spacing(_ state: State, workers: Int) -> Duration {
        (shared?.timing.spacingWindow ?? Self.spacingWindow) / state.share(of: workers)
    }

    private let state: Mutex<State>
    private let shared: SharedRate?

    public init(perSecond: Int, shared: SharedRate? = nil) {
        state = Mutex(State(perSecond: max(1, perSecond), floor: max(1, perSecond / 10)))
        self.shared = shared
    }

    /// The rate in effect now, before any sharing.
    public var perSecond: Int { state.withLock { $0.perSecond } }

    /// The workers this one shares with at `now` (1 alone), or when it may look again.
    private func workers(at now: ContinuousClock.Instant) -> (workers: Int, waitUntil: ContinuousClock.Instant?) {
        switch shared?.turn(at: now) {
        case nil: return (1, nil)
        case .share(let workers)?: return (workers, nil)
        case .wait(let until)?: return (1, until)
        }
    }

    /// Waits for this request's turn and returns the instant it was counted as sent (what the
    /// spacing is kept between). Throws only `CancellationError`.
    @discardableResult
    public func acquire() async throws -> ContinuousClock.Instant {
        var slot = reserve(now: .now)
        while true {
            if slot > .now { try await Task.sleep(until: slot, clock: .continuous) }
            let now = ContinuousClock.now
            guard let later = depart(now: now) else { return now }
            slot = later
        }
    }

    /// Reserves the next free slot at or after `now` (and after any `Retry-After`).
    func reserve(now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let (workers, waitUntil) = self.workers(at: now)
        return state.withLock { state in
            let slot = max(now, state.nextSlot ?? now, state.notBefore ?? now, waitUntil ?? now)
            state.nextSlot = slot + spacing(state, workers: workers)
            return slot
        }
    }

    /// Lets a request leave at `now` and records it, or returns the earliest time it may leave: one
    /// spacing after the last request actually left, and not before a `Retry-After`.
    func depart(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let (workers, waitUntil) = self.workers(at: now)
        if let waitUntil { return waitUntil }
        return state.withLock { state in
            let earliest = max(state.lastSent.map { $0 + spacing(state, workers: workers) } ?? now, state.notBefore ?? now)
            guard now >= earliest else { return earliest }
            state.lastSent = now
            return nil
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
