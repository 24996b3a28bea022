import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// When a worker may send, and at what share, as workers join and leave: arithmetic on injected
/// instants, no sleeping.
@Suite struct SharedRateTests {
    static let timing = SharedRate.Timing(refresh: .milliseconds(500), validity: .seconds(2), window: .milliseconds(1500))
    let t0 = ContinuousClock.now

    func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }

    @Test func aNewWorkerWaitsUntilEveryOtherHasStoppedUsingACountWithoutIt() {
        let rate = SharedRate(timing: Self.timing)
        #expect(rate.turn(at: at(0)) == .wait(until: at(50)))
        rate.joined(at: at(0))
        rate.record(workers: 2, startedAt: at(10))
        // validity (2 s) + window (1.5 s) after joining.
        #expect(rate.turn(at: at(100)) == .wait(until: at(3500)))
        #expect(rate.turn(at: at(3499)) == .wait(until: at(3500)))
        rate.record(workers: 2, startedAt: at(3000))
        #expect(rate.turn(at: at(3500)) == .share(workers: 2))
    }

    @Test func aLargerCountHoldsAtOnceASmallerOneOnlyAfterSettling() {
        let rate = SharedRate(timing: Self.timing)
        rate.joined(at: at(-10_000))
        rate.record(workers: 2, startedAt: at(0))
        #expect(rate.turn(at: at(100)) == .share(workers: 2))
        rate.record(workers: 4, startedAt: at(500))
        #expect(rate.turn(at: at(600)) == .share(workers: 4))
        // Two workers left: the first read without them starts at 1000; until 1000 + 3500 the 4 hold.
        rate.record(workers: 2, startedAt: at(1000))
        rate.record(workers: 2, startedAt: at(1500))
        rate.record(workers: 2, startedAt: at(2000))
        rate.record(workers: 2, startedAt: at(2500))
        rate.record(workers: 2, startedAt: at(3000))
        rate.record(workers: 2, startedAt: at(3500))
        rate.record(workers: 2, startedAt: at(4000))
        #expect(rate.turn(at: at(4499)) == .share(workers: 4))
        #expect(rate.turn(at: at(4500)) == .share(workers: 2))
        // A worker joining shrinks the share with the first read that shows it.
        rate.record(workers: 3, startedAt: at(4600))
        #expect(rate.turn(at: at(4600)) == .share(workers: 3))
    }

    @Test func noFreshCountMeansNoRequest() {
        let rate = SharedRate(timing: Self.timing)
        rate.joined(at: at(-10_000))
        rate.record(workers: 3, startedAt: at(0))
        #expect(rate.turn(at: at(2000)) == .share(workers: 3))
        #expect(rate.turn(at: at(2001)) == .wait(until: at(2051)))
        rate.record(workers: 3, startedAt: at(2100))
        #expect(rate.turn(at: at(2101)) == .share(workers: 3))
    }

    /// A limiter with a shared rate spaces its requests by its share: ⌊rate ÷ N⌋ a second.
    @Test func theLimiterSpacesRequestsByItsShare() {
        let shared = SharedRate(timing: Self.timing)
        shared.joined(at: at(-10_000))
        shared.record(workers: 4, startedAt: at(0))
        let limiter = RequestRateLimiter(perSecond: 10, shared: shared)
        // ⌊10 ÷ 4⌋ = 2 a second, spread over 1.1 s: one every 550 ms.
        #expect(limiter.reserve(now: at(1)) == at(1))
        #expect(limiter.depart(now: at(1)) == nil)
        #expect(limiter.reserve(now: at(2)) == at(551))
        #expect(limiter.depart(now: at(400)) == at(551))
        #expect(limiter.depart(now: at(551)) == nil)
        // Past the count's validity: wait, whatever the spacing.
        #expect(limiter.depart(now: at(2600)) == at(2650))
    }
}
