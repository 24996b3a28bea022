import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 6, initialBackoff: .milliseconds(500), maxBackoff: .seconds(4), maxRetryAfter: .seconds(10))

    @Test(arguments: [(1, 500), (2, 1000), (3, 2000), (4, 4000), (5, 4000), (9, 4000)])
    func ceilingDoublesUpToTheCap(attempt: Int, ceilingMs: Int64) {
        #expect(policy.backoff(afterAttempt: attempt, jitter: 1.0, retryAfter: nil) == .milliseconds(ceilingMs))
        #expect(policy.backoff(afterAttempt: attempt, jitter: 0.5, retryAfter: nil) == .milliseconds(ceilingMs / 2))
        #expect(policy.backoff(afterAttempt: attempt, jitter: 0, retryAfter: nil) == .zero)
    }

    @Test func retryAfterIsHonouredButCapped() {
        #expect(policy.backoff(afterAttempt: 1, jitter: 0.1, retryAfter: .seconds(3)) == .seconds(3))
        #expect(policy.backoff(afterAttempt: 1, jitter: 0.1, retryAfter: .seconds(120)) == .seconds(10))
        // A jittered backoff longer than Retry-After wins.
        #expect(policy.backoff(afterAttempt: 4, jitter: 1, retryAfter: .seconds(1)) == .seconds(4))
    }

    @Test func defaultsKeepAFailingReceiptToSeconds() {
        let defaults = RetryPolicy()
        #expect((3...10).contains(defaults.maxAttempts))
        #expect(defaults.initialBackoff <= .seconds(1))
        let worst = (1..<defaults.maxAttempts).reduce(Duration.zero) { $0 + defaults.backoff(afterAttempt: $1, jitter: 1, retryAfter: nil) }
        #expect(worst == .milliseconds(700))
    }

    @Test(arguments: [
        (21005, nil as Bool?, VerifyReceiptStatus.RetryDecision.retry),
        (21009, nil, .retry),
        (21002, nil, .retryOnce),
        (21100, nil, .retry),
        (21150, true, .retry),
        (21199, false, .fail),
        (21000, nil, .fail),
        (21003, nil, .fail),
        (21010, nil, .fail),
        (21001, nil, .fail),
        (21099, true, .fail),
        (21200, true, .fail),
    ])
    func statusRetryDecisions(code: Int, flag: Bool?, expected: VerifyReceiptStatus.RetryDecision) {
        #expect(VerifyReceiptStatus(rawValue: code).retryDecision(isRetryable: flag) == expected)
    }
}
