import Foundation
import Testing
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The rate limit as arithmetic on reserved send times (no sleeping), and over real HTTP as a
/// lower bound on the time a run takes.
@Suite struct RequestRateLimiterTests {
    /// Requests are spaced evenly from the first: one every 1.1 s ÷ rate, in arrival order.
    @Test func reservationsAreSpacedEvenly() {
        let limiter = RequestRateLimiter(perSecond: 5)
        let start = ContinuousClock.now
        let slots = (0..<12).map { limiter.reserve(now: start + .milliseconds($0 * 7)) }
        #expect(slots.first == start)
        for index in 1..<slots.count { #expect(slots[index] - slots[index - 1] == .milliseconds(220)) }
        // A request after a quiet spell goes at once.
        #expect(limiter.reserve(now: start + .seconds(10)) == start + .seconds(10))
    }

    /// However late each request wakes for its slot (up to 40 ms here, at seeded random), the
    /// requests leave one spacing apart at least, so no one-second window holds more than the
    /// rate: every rate + 1 consecutive departures span 1.1 s or more, the first second included.
    @Test(arguments: [5, 20, 50])
    func noWindowHoldsMoreThanTheRateDespiteLateWakeUps(rate: Int) {
        let limiter = RequestRateLimiter(perSecond: rate)
        let start = ContinuousClock.now
        var random = SplitMix(seed: UInt64(rate))
        func late() -> Duration { .microseconds(Int64(random.nextUnit() * 40_000)) }
        // Requests arrive in bursts of 16; each sleeps to its slot and wakes late by a jitter.
        var wakeUps: [(at: ContinuousClock.Instant, request: Int)] = (0..<(rate * 6)).map { index in
            let arrival = start + .milliseconds((index / 16) * 100)
            return (limiter.reserve(now: arrival) + late(), index)
        }
        var departures: [ContinuousClock.Instant] = []
        while !wakeUps.isEmpty {
            let next = wakeUps.indices.min { wakeUps[$0].at < wakeUps[$1].at }!
            let wakeUp = wakeUps.remove(at: next)
            if let later = limiter.depart(now: wakeUp.at) {
                wakeUps.append((later + late(), wakeUp.request))
            } else {
                departures.append(wakeUp.at)
            }
        }
        #expect(departures.count == rate * 6)
        for index in rate..<departures.count {
            #expect(departures[index] - departures[index - rate] >= .milliseconds(1100))
        }
        for index in 1..<departures.count {
            #expect(departures[index] - departures[index - 1] >= .milliseconds(1100) / rate)
        }
    }

    /// Halved once per second at most (a burst of 429s is one overload), never below a tenth.
    @Test func aRateLimitHalvesTheRateAndHoldsEveryoneBack() {
        let limiter = RequestRateLimiter(perSecond: 40)
        let start = ContinuousClock.now
        #expect(limiter.throttled(retryAfter: .seconds(2), now: start) == 20)
        #expect(limiter.reserve(now: start) == start + .seconds(2))
        #expect(limiter.throttled(retryAfter: nil, now: start + .milliseconds(999)) == 20)
        #expect(limiter.throttled(retryAfter: nil, now: start + .seconds(1)) == 10)
        #expect(limiter.throttled(retryAfter: nil, now: start + .seconds(2)) == 5)
        #expect(limiter.throttled(retryAfter: nil, now: start + .seconds(3)) == 4)
        #expect(limiter.throttled(retryAfter: nil, now: start + .seconds(4)) == 4)
        #expect(RequestRateLimiter(perSecond: 1).throttled(retryAfter: nil) == 1)
    }

    /// 12 rows at 5 requests/s, one every 220 ms, cannot take less than 11 × 220 ms.
    @Test func aRunKeepsTheRate() async throws {
        let answers = ServerAPIAnswers(pki: try TestPKI())
        try await ScriptedServerAPI.withServer { server, production, sandbox in
            for index in 0..<12 { await server.script("10000001\(index)", [.json(answers.statuses([answers.lastTransaction("10000001\(index)")]))]) }
            try await ServerAPIClient.withClient(try answers.configuration(production: production, sandbox: sandbox, rate: 5)) { client in
                let start = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<12 {
                        group.addTask { _ = try await client.status(of: ServerAPIAnswers.row("10000001\(index)"), logger: .init(label: "test")) }
                    }
                    try await group.waitForAll()
                }
                #expect(ContinuousClock.now - start >= .milliseconds(2420))
            }
            #expect(await server.received.count == 12)
        }
    }

    @Test func retryAfterIsReadInEveryForm() {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        #expect(RetryAfter.wait("1790000002500", now: now) == .milliseconds(2500))
        #expect(RetryAfter.wait("3", now: now) == .seconds(3))
        #expect(RetryAfter.wait("Mon, 21 Sep 2026 14:13:24 GMT", now: Date(timeIntervalSince1970: 1_789_999_999.0)) == .seconds(5))
        #expect(RetryAfter.wait("1789999990000", now: now) == .zero)
        #expect(RetryAfter.wait("soon", now: now) == nil)
        #expect(RetryAfter.wait(nil, now: now) == nil)
    }
}
