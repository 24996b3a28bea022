import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Episodes already under way when the trail (or the report's window) begins: counted when first
/// seen inside the window, and entering the recovery curve on the day they were first seen.
extension TrailReportTests {
    /// Row 1 is first verified 10 days into its billing retry and lost on day 15; row 2 enters its
    /// retry on day 1 of it and recovers on day 12; row 3's episode was seen before the window.
    static var firstSeenTrail: [TrailEvent] {
        let d = day, t = t0, hour: Int64 = 3_600_000
        let events: [(Int64, Int64, String, SubscriptionState)] = [
            (3, t - 5 * d, "first_verified", columns(3, expires: t - 6 * d, retry: true, intent: 2)),
            (1, t + hour, "first_verified", columns(1, expires: t - 10 * d, retry: true, intent: 2)),
            (2, t + hour, "first_verified", columns(2, expires: t + 2 * d)),
            (3, t + d, "recovered", columns(3, expires: t + 24 * d)),
            (2, t + 3 * d, "entered_billing_retry", columns(2, expires: t + 2 * d, retry: true, intent: 2)),
            (1, t + 5 * d, "expired", columns(1, expires: t - 10 * d, intent: 2)),
            (2, t + 14 * d, "recovered", columns(2, expires: t + 44 * d)),
        ]
        return events.enumerated().map { index, e in TrailEvent(id: Int64(index + 1), subscriptionID: e.0, atMs: e.1, reason: e.2, new: e.3) }
    }

    @Test func anEpisodeFirstSeenInsideTheWindowCountsWhereverItsDayZeroLies() {
        var episodes: [BillingEpisode] = []
        let report = Self.report(trail: Self.firstSeenTrail, onEpisode: { episodes.append($0) })
        #expect(episodes.map(\.subscriptionID) == [1, 2])  // row 3's was seen before the window
        #expect(report.episodeCounts == ["recovered": 1, "lost": 1, "cancelled": 0, "refunded": 0, "open": 0])
        #expect(episodes[0].startMs == Self.t0 - 10 * Self.day)
        #expect(episodes[0].daysUntilSeen == 10)
        #expect(episodes[0].days(endMs: report.toMs) == 15)
        #expect(episodes[1].daysUntilSeen == 1)
        #expect(episodes[1].days(endMs: report.toMs) == 12)
        #expect(report.episodes.medianDetectionLagDays == 1)  // the lower median of 1 d and 10 d 1 h
    }

    /// Delayed entry by hand: nobody at risk on day 0, row 2 from day 1, both from day 10; row 2's
    /// recovery on day 12 takes half, leaving S = 1/2; row 1's loss on day 15 takes the rest.
    @Test func theCurveTakesAnEpisodeInOnTheDayItWasFirstSeen() {
        let curve = Self.report(trail: Self.firstSeenTrail).curve
        #expect(curve.points.map(\.atRisk)[0...16] == [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 0])
        #expect(curve.points[11].recovered == 0)
        #expect(curve.points[12].recovered == 0.5)
        #expect(curve.points[14].lost == 0)
        #expect(curve.points[15].lost == 0.5)
        #expect(curve.points[60].recovered == 0.5)
        #expect(curve.points[60].lost == 0.5)
    }
}
