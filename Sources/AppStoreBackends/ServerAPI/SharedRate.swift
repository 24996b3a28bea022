import Logging
import Synchronization

/// `--server-api-rate` shared by every worker of one database: each worker sends at most
/// `⌊rate ÷ N⌋` requests a second, where N is the number of live workers it read from the
/// database, so N workers together stay under the rate with no arithmetic by hand.
///
/// Counts are read every ``Timing/refresh``. The rule that keeps every one-second window under
/// the rate while workers join and leave, with V = ``Timing/validity`` and W = ``Timing/window``:
///
/// - A worker uses a count for at most V after its read started; with no newer read it sends
///   nothing (the database cannot be read: it waits rather than guess).
/// - A new worker is counted by the others from the moment it joins; it sends its first request
///   V + W after joining, when every other worker has stopped using a count without it (V) and
///   their last requests at the larger share have left every window it can share with them (W).
/// - A smaller count (a worker left or died) takes effect only V + W after the first read that
///   showed it: the worker that left may still have been sending, on its last count, for up to V.
/// - A larger count takes effect at once.
///
/// W is one second plus a margin for scheduling; each worker's own ``RequestRateLimiter`` keeps
/// its share in any one-second window (spaced over ``Timing/spacingWindow``, a little more than a
/// second), so the sum of the shares is what Apple sees at most.
public final class SharedRate: Sendable {
    /// How often counts are read and how long they are trusted.
    public struct Timing: Sendable {
        public var refresh: Duration
        public var validity: Duration
        public var window: Duration
        /// A worker spaces its share over this rather than over one second, as a worker alone
        /// does (``RequestRateLimiter/spacingWindow``).
        public var spacingWindow: Duration

        public init(
            refresh: Duration = .milliseconds(500), validity: Duration = .seconds(2), window: Duration = .milliseconds(1500),
            spacingWindow: Duration = RequestRateLimiter.spacingWindow
        ) {
            self.refresh = refresh
            self.validity = validity
            self.window = window
            self.spacingWindow = spacingWindow
        }

        /// How long a worker waits after joining, and how long a smaller count waits to take effect.
        public var settling: Duration { validity + window }
    }

    /// What a worker may do at an instant: send at its share of the rate, or wait.
    enum Turn: Equatable {
        case share(workers: Int)
        case wait(until: ContinuousClock.Instant)
    }

    struct Read {
        var startedAt: ContinuousClock.Instant
        var workers: Int
    }

    struct State {
        var joinedAt: ContinuousClock.Instant?
        var reads: [Read] = []
        var failing = false
    }

    public let timing: Timing
    private let state = Mutex(State())

    public init(timing: Timing = Timing()) {
        self.timing = timing
    }

    /// The workers this one's share divides the rate by at `now`, or when to look again.
    func turn(at now: ContinuousClock.Instant) -> Turn {
        state.withLock { state in
            guard let joinedAt = state.joinedAt else { return .wait(until: now + .milliseconds(50)) }
            if now < joinedAt + timing.settling { return .wait(until: joinedAt + timing.settling) }
            guard let latest = state.reads.last, now - latest.startedAt <= timing.validity else {
                return .wait(until: now + .milliseconds(50))
            }
            // A read's count holds until `settling` after the next read started.
            var workers = latest.workers
            for index in state.reads.indices.dropLast() where state.reads[index + 1].startedAt + timing.settling > now {
                workers = max(workers, state.reads[index].workers)
            }
            return .share(workers: max(1, workers))
        }
    }

    /// This worker is counted by the others from `at` on.
    func joined(at instant: ContinuousClock.Instant) {
        state.withLock { $0.joinedAt = instant }
    }

    /// A count read by a query that started at `startedAt`.
    func record(workers: Int, startedAt: ContinuousClock.Instant) {
        state.withLock { state in
            state.reads.append(Read(startedAt: startedAt, workers: workers))
            // Reads whose successor started `settling` ago no longer count.
            while state.reads.count > 1, state.reads[1].startedAt + timing.settling <= startedAt { state.reads.removeFirst() }
        }
    }

    /// Runs `body` as one of `workers`: joins, re-reads the count every ``Timing/refresh`` while
    /// `body` runs, and leaves afterwards.
    public func sharing<T: Sendable>(_ workers: any RateSharingWorkers, rate: Int, logger: Logger, _ body: () async -> T) async -> T {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.keepCounting(workers, rate: rate, logger: logger) }
            let result = await body()
            group.cancelAll()
            await group.waitForAll()
            return result
        }
    }

    private func keepCounting(_ workers: any RateSharingWorkers, rate: Int, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await workers.join()
                joined(at: .now)
                break
            } catch {
                logger.warning("cannot join the workers sharing the Server API rate; its requests wait until it can", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
        var last: Int?
        while !Task.isCancelled {
            let startedAt = ContinuousClock.now
            do {
                let count = try await workers.count()
                record(workers: count, startedAt: startedAt)
                if count != last {
                    logger.info("Server API rate shared", metadata: ["workers": "\(count)", "per_worker": "\(max(1, rate / max(1, count)))"])
                    last = count
                }
                if state.withLock({ $0.failing }) {
                    state.withLock { $0.failing = false }
                    logger.notice("the workers sharing the Server API rate can be counted again")
                }
            } catch {
                if !state.withLock({ $0.failing }) {
                    state.withLock { $0.failing = true }
                    logger.warning(
                        "cannot count the workers sharing the Server API rate; Server API requests wait from \(timing.validity) after the last count until it can",
                        metadata: ["error": "\(error)"])
                }
            }
            try? await Task.sleep(until: startedAt + timing.refresh, clock: .continuous)
        }
        await workers.leave()
    }
}
