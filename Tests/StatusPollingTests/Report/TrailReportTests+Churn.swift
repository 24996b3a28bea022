import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Churn from what the trail records, whoever brought it: an expiry notified at its own instant,
/// and access that never ended though the poll saw the expiry pass first.
extension TrailReportTests {
    static func churnReport(_ events: [(Int64, Int64, String, SubscriptionState)]) -> TrailReport {
        report(trail: events.enumerated().map { index, e in TrailEvent(id: Int64(index + 1), subscriptionID: e.0, atMs: e.1, reason: e.2, new: e.3) })
    }

    /// Apple signs `EXPIRED` at the expiry itself: the event finds the row already without access at
    /// its own instant. Such churn was lost, so a notified setup's churn was nearly all refunds.
    @Test func anExpiryNotifiedAtItsOwnInstantIsChurnWithItsIntent() {
        let d = Self.day, t = Self.t0
        let report = Self.churnReport([
            (1, t + 3_600_000, "first_verified", Self.columns(1, expires: t + 3 * d, autoRenew: false)),
            (1, t + 3 * d, "expired", Self.columns(1, expires: t + 3 * d, intent: 1, autoRenew: false)),
        ])
        #expect(report.churn.filter { $0.kind == "week" }.map(\.byIntent) == [["1": 1], [:], [:]])
        #expect(report.churn.filter { $0.kind == "month" }.map(\.byIntent) == [["1": 1]])
    }

    /// Row 1's renewal fails on Sunday evening and the Monday poll finds it in a grace period: its
    /// access never ended (the grace period begins at the expiry). Row 2 renews into the yearly
    /// product on Sunday; the poll sees it as `upgraded` on Monday. Neither is churn — both were
    /// counted as churn of intent "unknown" in the week of the expiry.
    @Test func accessThatNeverEndedIsNoChurnAcrossAWeeksEnd() {
        let d = Self.day, t = Self.t0, sundayEvening = t + 7 * d - 3_600_000, mondayPoll = t + 7 * d + 13 * 3_600_000
        var yearly = Self.columns(2, expires: t + 372 * d)
        yearly.productID = "premium.yearly"
        let report = Self.churnReport([
            (1, t + 3_600_000, "first_verified", Self.columns(1, expires: sundayEvening)),
            (2, t + 3_600_000, "first_verified", Self.columns(2, expires: sundayEvening)),
            (1, mondayPoll, "entered_grace", Self.columns(1, expires: sundayEvening, retry: true, grace: sundayEvening + 16 * d, intent: 2)),
            (2, mondayPoll, "upgraded", yearly),
        ])
        #expect(report.churn.map(\.churned) == [0, 0, 0, 0])  // three weeks, one month
        #expect(report.churn.allSatisfy { $0.byIntent.isEmpty })
    }
}
