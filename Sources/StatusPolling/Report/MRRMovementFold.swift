import EntitlementCore

/// Monthly recurring revenue's movement, month by month and per currency, folded from each
/// subscription's paid periods: a subscription's MRR at a month's end is the sum of its paid
/// periods running then (the same rule as ``RevenueReport/monthlyRecurringRevenue``), and each
/// month compares it with the month before — from nothing, **new** (its first paying month end) or
/// **reactivation**; to nothing, **churn**; up or down, **expansion** or **contraction** (a plan
/// or price change). So a currency's MRR at a month's end minus the one before is that month's net
/// movement, exactly. Periods come a subscription at a time (``RevenueSQL/paidPeriods(_:subscriptions:toMs:environment:)``).
struct MRRMovementFold {
    /// The last day MRR is read at (`toMs`'s day), and its month: the last month with movement.
    let lastDay: Int64
    let lastMonth: Int64
    private var subscriptionID: Int64?
    /// The current subscription's MRR by (currency, month index), unsorted, one entry per period and month.
    private var running: [(currency: String, month: Int64, milliunits: Int64)] = []
    private var movements: [Key: RevenueReport.MRRMovement] = [:]

    private struct Key: Hashable {
        var month: Int64
        var currency: String
    }

    init(toMs: Int64) {
        lastDay = (toMs - 1) / ReportCalendar.dayMs
        lastMonth = Self.month(ofDay: lastDay)
    }

    /// Months as `year × 12 + month − 1`, so that consecutive months differ by one.
    static func month(ofDay day: Int64) -> Int64 {
        let date = RFC3339Timestamp.civil(daysSinceEpoch: day)
        return date.year * 12 + date.month - 1
    }

    static func startMs(ofMonth month: Int64) -> Int64 {
        RFC3339Timestamp.daysSinceEpoch(year: month / 12, month: month % 12 + 1, day: 1) * ReportCalendar.dayMs
    }

    /// A page of periods, each subscription's together (the page's order by subscription).
    mutating func add(_ periods: [PaidPeriod]) {
        // A subscription's periods must come together: SQLite's come in its index's order, PostgreSQL's in none.
        let grouped = zip(periods, periods.dropFirst()).allSatisfy { $0.subscriptionID <= $1.subscriptionID }
        for period in grouped ? periods : periods.sorted(by: { $0.subscriptionID < $1.subscriptionID }) {
            if period.subscriptionID != subscriptionID {
                close()
                subscriptionID = period.subscriptionID
            }
            // Running at a month's end: bought that day or before, ending after it; the last month's
            // "end" is the report's last day.
            guard period.purchaseDay <= lastDay else { continue }
            let first = Self.month(ofDay: period.purchaseDay)
            let last = period.expiryDay > lastDay ? lastMonth : Self.month(ofDay: period.expiryDay) - 1
            guard first <= last else { continue }
            for month in first...last { running.append((period.currency, month, period.monthlyMilliunits)) }
        }
    }

    /// Every month's movement so far, the current subscription's included.
    mutating func finish() -> [RevenueReport.MRRMovement] {
        close()
        return movements.values.sorted { ($0.monthMs, $0.currency) < ($1.monthMs, $1.currency) }
    }

    /// The current subscription's movement, per currency in month order.
    private mutating func close() {
        defer { running.removeAll(keepingCapacity: true) }
        guard var firstMonth = running.first?.month else { return }
        for entry in running where entry.month < firstMonth { firstMonth = entry.month }
        running.sort { ($0.currency, $0.month) < ($1.currency, $1.month) }
        var index = 0
        while index < running.count {
            let currency = running[index].currency
            var previous: (month: Int64, milliunits: Int64)?
            while index < running.count, running[index].currency == currency {
                let month = running[index].month
                var milliunits: Int64 = 0
                while index < running.count, running[index].currency == currency, running[index].month == month {
                    milliunits += running[index].milliunits
                    index += 1
                }
                if let before = previous, before.month == month - 1 {
                    if milliunits > before.milliunits {
                        record(month, currency, \.expansion, milliunits - before.milliunits)
                    } else if milliunits < before.milliunits {
                        record(month, currency, \.contraction, before.milliunits - milliunits)
                    }
                } else {
                    if let before = previous { record(before.month + 1, currency, \.churn, before.milliunits) }
                    record(month, currency, month == firstMonth ? \.new : \.reactivation, milliunits)
                }
                previous = (month, milliunits)
            }
            if let before = previous, before.month < lastMonth { record(before.month + 1, currency, \.churn, before.milliunits) }
        }
    }

    private mutating func record(
        _ month: Int64, _ currency: String, _ kind: WritableKeyPath<RevenueReport.MRRMovement, RevenueReport.MRRMovement.Change>, _ milliunits: Int64
    ) {
        let key = Key(month: month, currency: currency)
        movements[key, default: RevenueReport.MRRMovement(monthMs: Self.startMs(ofMonth: month), currency: currency)][keyPath: kind].add(milliunits)
    }
}
