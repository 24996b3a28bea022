import Testing

@testable import EntitlementCore
@testable import StatusPolling

/// MRR's movement folded from paid periods: each subscription's MRR at a month's end (the periods
/// running then, summed) against the month before's, so a month's net movement is exactly the
/// change of MRR between the two month ends.
@Suite struct MRRMovementFoldTests {
    /// Days since 1970 of a date in 2026.
    static func day(_ month: Int64, _ day: Int64) -> Int64 { RFC3339Timestamp.daysSinceEpoch(year: 2026, month: month, day: day) }
    static func monthMs(_ month: Int64) -> Int64 { day(month, 1) * ReportCalendar.dayMs }
    /// The report's end: May 1st, 2026 (April's "end" is April 30th).
    static let toMs = monthMs(5)

    static func period(_ subscription: Int64, _ from: (Int64, Int64), _ to: (Int64, Int64), _ monthly: Int64, _ currency: String = "USD") -> PaidPeriod {
        PaidPeriod(subscriptionID: subscription, purchaseDay: day(from.0, from.1), expiryDay: day(to.0, to.1), monthlyMilliunits: monthly, currency: currency)
    }

    /// "month currency kind subscriptions milliunits" for every change that happened.
    static func lines(_ movements: [RevenueReport.MRRMovement]) -> [String] {
        movements.flatMap { m in
            m.changes.filter { $0.1.subscriptions > 0 }.map { "\(RFC3339Timestamp.civil(daysSinceEpoch: m.monthMs / ReportCalendar.dayMs).month) \(m.currency) \($0.0) \($0.1.subscriptions) \($0.1.milliunits)" }
        }
    }

    static func fold(_ pages: [[PaidPeriod]]) -> [RevenueReport.MRRMovement] {
        var fold = MRRMovementFold(toMs: toMs)
        for page in pages { fold.add(page) }
        return fold.finish()
    }

    @Test func aPlanChangeIsExpansionOrContractionAndTheEndIsChurn() {
        let movements = Self.fold([[
            Self.period(1, (1, 10), (2, 10), 1_000), Self.period(1, (2, 10), (3, 10), 3_000), Self.period(1, (3, 10), (4, 10), 2_000),
        ]])
        #expect(Self.lines(movements) == ["1 USD new 1 1000", "2 USD expansion 1 2000", "3 USD contraction 1 1000", "4 USD churn 1 2000"])
        #expect(movements.map(\.netMilliunits) == [1_000, 2_000, -1_000, -2_000])
    }

    @Test func aMonthEndWithoutAPeriodIsChurnThenReactivation() {
        let movements = Self.fold([[Self.period(2, (1, 5), (2, 5), 500, "EUR"), Self.period(2, (3, 3), (4, 3), 500, "EUR")]])
        #expect(Self.lines(movements) == ["1 EUR new 1 500", "2 EUR churn 1 500", "3 EUR reactivation 1 500", "4 EUR churn 1 500"])
    }

    /// A year runs at every month's end up to the report's; a period ending on the report's last
    /// day runs at none (as in MRR: expiring after the day's end); one bought after it is not read.
    @Test func periodsAreCutAtTheReportsLastDay() {
        let movements = Self.fold([[
            Self.period(3, (1, 15), (13, 15), 100, "GBP"),
            Self.period(4, (4, 1), (4, 30), 700),
            Self.period(5, (4, 30), (5, 30), 900),
            Self.period(6, (5, 1), (6, 1), 300),
        ]])
        #expect(Self.lines(movements) == ["1 GBP new 1 100", "4 USD new 1 900"])
    }

    /// Two periods running at one month's end add up; a subscription's MRR moves once.
    @Test func overlappingPeriodsAddUp() {
        let movements = Self.fold([[Self.period(7, (1, 1), (2, 1), 1_000), Self.period(7, (1, 20), (2, 20), 500)]])
        #expect(Self.lines(movements) == ["1 USD new 1 1500", "2 USD churn 1 1500"])
    }

    /// Another storefront's currency: churn in the old one, and in the new one a reactivation (the
    /// subscription paid before), never summed across currencies.
    @Test func aCurrencyChangeLeavesOneAndReturnsInTheOther() {
        let movements = Self.fold([[Self.period(8, (1, 1), (2, 1), 1_000), Self.period(8, (2, 1), (3, 1), 900, "EUR")]])
        #expect(Self.lines(movements) == ["1 USD new 1 1000", "2 EUR reactivation 1 900", "2 USD churn 1 1000", "3 EUR churn 1 900"])
    }

    /// Pages split anywhere and out of order within a page give the same movement.
    @Test func pagesAndOrderDoNotMatter() {
        let periods = [
            Self.period(1, (1, 10), (2, 10), 1_000), Self.period(1, (2, 10), (3, 10), 3_000), Self.period(2, (1, 5), (2, 5), 500),
            Self.period(2, (3, 3), (4, 3), 500), Self.period(9, (2, 2), (3, 2), 250),
        ]
        let whole = Self.fold([periods])
        #expect(Self.fold([Array(periods.prefix(2)), Array(periods.dropFirst(2))]) == whole)
        #expect(Self.fold([[periods[2], periods[4], periods[0], periods[3], periods[1]]]) == whole)
        #expect(Self.lines(whole) == [
            "1 USD new 2 1500", "2 USD new 1 250", "2 USD expansion 1 2000", "2 USD churn 1 500", "3 USD reactivation 1 500",
            "3 USD churn 2 3250", "4 USD churn 1 500",
        ])
    }
}
