import Testing

@testable import PostgresStore

/// When the PostgreSQL deliverer refreshes the deliveries' statistics: every 1,000 added, at most
/// once a minute.
@Suite struct DeliveryStatisticsTests {
    @Test func everyThousandAddedAtMostOnceAMinute() {
        let statistics = DeliveryStatistics()
        let t0 = ContinuousClock.now
        #expect(!statistics.shouldAnalyze(afterAdding: 999, now: t0))
        #expect(statistics.shouldAnalyze(afterAdding: 1, now: t0), "the thousandth")
        #expect(!statistics.shouldAnalyze(afterAdding: 5_000, now: t0 + .seconds(59)), "within the minute")
        #expect(statistics.shouldAnalyze(afterAdding: 0, now: t0 + .seconds(60)), "the 5,000 waited for the minute")
        #expect(!statistics.shouldAnalyze(afterAdding: 999, now: t0 + .seconds(600)), "counted again from zero")
    }
}
