import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The run's concurrency over scripted answer sequences: halved on overload (a 429, or transient
/// failures above the threshold's share of the window), never by sporadic noise, and grown back
/// by one per `current` answers once the window is calm. Counted in answers, so no clock is involved.
@Suite struct ConcurrencyLimitTests {
    /// A steady stream of answers, `rate` of them 503s at seeded places.
    static func noise(rate: Double, count: Int, seed: UInt64) -> [AnswerSignal] {
        var generator = SplitMix(seed: seed)
        return (0..<count).map { _ in generator.nextUnit() < rate ? .transient(.httpStatus) : .calm }
    }

    /// Sporadic 503s and retryable statuses are retried, not a reason to slow down: at 3 % and 10 %
    /// over 20,000 answers the limit never moves (the floor is three quarters of it).
    @Test(arguments: [0.03, 0.10])
    func steadyNoiseKeepsTheConcurrency(rate: Double) {
        var limit = ConcurrencyLimit(ceiling: 64)
        let answers = Self.noise(rate: rate, count: 20_000, seed: 7)
        for answer in answers { limit.record(answer) }
        #expect(limit.lowest == 64)
        #expect(limit.current == 64)
        #expect(limit.cuts == 0)
        #expect(limit.throttled == answers.filter { $0 != .calm }.count)
        #expect(limit.lowest * 4 >= 64 * 3)
    }

    /// A burst of 429s halves once per round of answers that were in flight at the cut: 64 429s
    /// in a row are one overload (64 → 32), the 65th is a second one (32 → 16).
    @Test func aBurstOfRateLimitsHalvesOncePerRound() {
        var limit = ConcurrencyLimit(ceiling: 64)
        limit.record(.overload)
        #expect(limit.current == 32)
        for _ in 0..<63 { limit.record(.overload) }
        #expect(limit.current == 32)
        limit.record(.overload)
        #expect(limit.current == 16)
        #expect(limit.cuts == 2)
        #expect(limit.throttled == 65)
        #expect(limit.lowest == 16)
    }

    /// After a 429, the limit grows back by one per `current` answers, noise or not, up to the
    /// ceiling and never past it.
    @Test func itGrowsBackAdditivelyThroughNoise() {
        var limit = ConcurrencyLimit(ceiling: 8)
        limit.record(.overload)
        #expect(limit.current == 4)
        for _ in 0..<3 { limit.record(.calm) }
        #expect(limit.current == 4)
        limit.record(.transient(.httpStatus))
        #expect(limit.current == 5)
        for _ in 0..<5 { limit.record(.calm) }
        #expect(limit.current == 6)
        // A 429 a round after the last cut is a new overload: 6 → 3, and the count starts again.
        for _ in 0..<5 { limit.record(.calm) }
        limit.record(.overload)
        #expect(limit.current == 3)
        for _ in 0..<2 { limit.record(.calm) }
        #expect(limit.current == 3)
        limit.record(.calm)
        #expect(limit.current == 4)
        for _ in 0..<1000 { limit.record(.calm) }
        #expect(limit.current == 8)
        #expect(limit.lowest == 3)
        #expect(limit.cuts == 2)
    }

    /// Half the answers failing is an overload: the limit halves when the window first holds more
    /// than 20 % of failures and is full (answer 200), then once per window while it stays so,
    /// down to an eighth of the ceiling.
    @Test func aHighShareOfFailuresHalvesOncePerWindow() {
        var limit = ConcurrencyLimit(ceiling: 64)
        var seen: [Int: Int] = [:]
        for index in 1...1_000 {
            limit.record(index % 2 == 0 ? .transient(.httpStatus) : .calm)
            if index % 100 == 0 { seen[index] = limit.current }
        }
        #expect(seen == [100: 64, 200: 32, 300: 32, 400: 16, 500: 16, 600: 8, 700: 8, 800: 8, 900: 8, 1_000: 8])
        #expect(limit.isOverloaded)
        #expect(limit.cuts == 3)
        #expect(limit.lowest == 8)
        // A 429 still takes it lower.
        limit.record(.overload)
        #expect(limit.current == 4)
    }

    /// Once the failures fall back to noise, the window empties of them and the limit recovers
    /// by it, with 10 % of failures still coming: no streak of perfect answers is needed.
    @Test func itRecoversByTheWindowNotByAStreak() {
        var limit = ConcurrencyLimit(ceiling: 64)
        for index in 1...600 { limit.record(index % 2 == 0 ? .transient(.httpStatus) : .calm) }
        #expect(limit.current == 8)
        var recovered: Int?
        for (index, answer) in Self.noise(rate: 0.10, count: 10_000, seed: 11).enumerated() {
            limit.record(answer)
            if recovered == nil, limit.current == 64 { recovered = index + 1 }
        }
        #expect(limit.current == 64)
        #expect(!limit.isOverloaded)
        // Not before most failures left the window (the share is above 20 % for the first 100
        // answers at least), then 8 + 9 + … + 63 answers.
        #expect(recovered.map { $0 > 100 && $0 <= 200 + (8...63).reduce(0, +) } == true)
        #expect(limit.lowest == 8)
    }

    /// An outage (every answer failing): the limit halves once per window down to an eighth of
    /// the ceiling, and the circuit breaker, which looks at finished rows, trips at its own window.
    @Test func anOutageSinksTheLimitAndTripsTheBreaker() {
        var limit = ConcurrencyLimit(ceiling: 16)
        var breaker = CircuitBreaker.Record(CircuitBreaker())
        var trippedAt: Int?
        for index in 1...1_200 {
            limit.record(.transient(.httpStatus))
            let failure = VerificationFailure(.httpStatus, "production answered HTTP 503", httpStatus: 503, isTransient: true)
            if trippedAt == nil, breaker.record(failure) != nil { trippedAt = index }
        }
        #expect(trippedAt == CircuitBreaker.defaultWindow)
        #expect(limit.current == 2)
        #expect(limit.cuts == 3)
        #expect(limit.throttled == 1_200)
    }

    /// A threshold of its own: 5 % over 20 answers cuts at the 20th answer when two failed.
    @Test func theThresholdIsConfigurable() {
        var limit = ConcurrencyLimit(ceiling: 10, threshold: OverloadThreshold(window: 20, share: 0.05))
        for index in 1...20 { limit.record(index == 3 || index == 20 ? .transient(.httpStatus) : .calm) }
        #expect(limit.current == 5)
        #expect(limit.cuts == 1)
    }
}

/// SplitMix64: a seeded sequence for scripted answers.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
