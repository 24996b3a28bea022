import Testing

@testable import StatusPolling

/// The run's back-off: halve on a sign to slow down, once per round of answers in flight; grow
/// back by one per `current` calm answers. Counted in answers, so no clock is involved.
@Suite struct ConcurrencyLimitTests {
    @Test func aBurstOfThrottledAnswersHalvesOncePerRound() {
        var limit = ConcurrencyLimit(ceiling: 64)
        limit.record(throttled: true)
        #expect(limit.current == 32)
        // The other answers of the same round (they were in flight at the cut) do not cut again.
        for _ in 0..<31 { limit.record(throttled: true) }
        #expect(limit.current == 32)
        limit.record(throttled: true)
        #expect(limit.current == 16)
        #expect(limit.throttled == 33)
        #expect(limit.lowest == 16)
    }

    @Test func neverBelowOneAndGrowsBackAdditively() {
        var limit = ConcurrencyLimit(ceiling: 4)
        for _ in 0..<20 { limit.record(throttled: true) }
        #expect(limit.current == 1)
        #expect(limit.lowest == 1)
        limit.record(throttled: false)
        #expect(limit.current == 2)
        limit.record(throttled: false)
        #expect(limit.current == 2)
        limit.record(throttled: false)
        #expect(limit.current == 3)
        for _ in 0..<3 { limit.record(throttled: false) }
        #expect(limit.current == 4)
        for _ in 0..<100 { limit.record(throttled: false) }
        #expect(limit.current == 4)
        #expect(limit.lowest == 1)
    }

    @Test func calmAnswersNeverRaiseItAboveTheCeiling() {
        var limit = ConcurrencyLimit(ceiling: 8)
        for _ in 0..<1000 { limit.record(throttled: false) }
        #expect(limit.current == 8)
        #expect(limit.lowest == 8)
        #expect(limit.throttled == 0)
    }
}
