import Foundation
import Testing
@testable import StatusPolling

/// The rate limit as arithmetic on reserved send times (no sleeping), and over real HTTP as a
/// lower bound on the time a run takes.
@Suite struct RequestRateLimiterTests {
    /// However requests arrive, no one-second window holds more than the rate: any rate + 1
    /// consecutive sends span a second or more, the first second included.
    @Test func noWindowHoldsMoreThanTheRate() {
        let limiter = RequestRateLimiter(perSecond: 5)
        let start = ContinuousClock.now
        var slots: [ContinuousClock.Instant] = []
        for index in 0..<40 { slots.append(limiter.reserve(now: start + .milliseconds(index * 7))) }
        #expect(slots.prefix(5).allSatisfy { $0 < start + .milliseconds(50) })
        for index in 5..<slots.count { #expect(slots[index] - slots[index - 5] >= .seconds(1)) }
        #expect(slots.last! - start >= .seconds(7))
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

    /// 12 rows at 5 requests/s cannot take less than (12 − 5) / 5 = 1.4 s.
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
                #expect(ContinuousClock.now - start >= .milliseconds(1400))
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
