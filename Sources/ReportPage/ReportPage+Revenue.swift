import Foundation
import StatusPolling

extension ReportPage {
    /// One section per currency that saw money (never summed across currencies), the currency with
    /// the most gross first, then the offers' conversion when offers started: each drawn only when
    /// the ledger holds something for it (unpriced transactions are in the JSON and CSV only).
    static func revenue(_ report: TrailReport) -> [Section] {
        let months = report.revenue.months
        let gross = Dictionary(grouping: months, by: \.currency).mapValues { $0.map { $0.grossMilliunits + $0.refundedMilliunits }.reduce(0, +) }
        let currencies = gross.keys.filter { gross[$0]! > 0 }.sorted { (gross[$0]!, $1) > (gross[$1]!, $0) }
        return currencies.flatMap { [revenue(report, currency: $0)] + movement(report, currency: $0) }
            + (report.revenue.offers.isEmpty ? [] : [offers(report)])
    }

    /// MRR's movement in one currency per month: gains above the zero line, losses below; none
    /// when no paid period ran at a month's end in that currency.
    static func movement(_ report: TrailReport, currency: String) -> [Section] {
        let months = report.revenue.mrrMovement.filter { $0.currency == currency }
        guard !months.isEmpty else { return [] }
        func series(_ name: String, _ color: String, _ sign: Double, _ change: (RevenueReport.MRRMovement) -> RevenueReport.MRRMovement.Change) -> ChartSeries {
            ChartSeries(name: name, color: color, values: months.map { sign * Double(change($0).milliunits) / 1000 })
        }
        return [
            Section(
                id: "mrr-movement-\(currency.lowercased())", title: "MRR movement in \(currency) per month",
                chart: StackedChart(
                    style: .bars,
                    series: [
                        series("new", ChartPalette.green, 1, \.new), series("reactivation", ChartPalette.blue, 1, \.reactivation),
                        series("expansion", ChartPalette.sky, 1, \.expansion), series("contraction", ChartPalette.orange, -1, \.contraction),
                        series("churn", ChartPalette.vermillion, -1, \.churn),
                    ],
                    xLabels: months.map { TrailReport.date($0.monthMs) }, xTitle: "month (UTC)", yTitle: "\(currency) a month"),
                definition: """
                    How MRR changed from the previous month's end to this month's, subscription by subscription (a row of the database \
                    with its paid periods in the ledger): new, paying at a month's end for the first time; reactivation, paying again \
                    after a month's end without; expansion and contraction, paying more or less than a month before (another plan or \
                    price); churn, paying a month before and not now (expired, refunded or in billing retry at the month's end). Net is \
                    this month's MRR minus the previous month's, exactly.
                    """,
                columns: ["month", "new", "reactivation", "expansion", "contraction", "churn", "net"],
                rows: months.map { m in
                    [TrailReport.date(m.monthMs)] + m.changes.map { "\(amount($0.1.milliunits)) (\($0.1.subscriptions))" } + [amount(m.netMilliunits)]
                })
        ]
    }

    static func revenue(_ report: TrailReport, currency: String) -> Section {
        let months = report.revenue.months.filter { $0.currency == currency }
        let mrr = Dictionary(
            report.revenue.monthlyRecurringRevenue.filter { $0.currency == currency }.map { (monthKey($0.atMs), $0.milliunits) },
            uniquingKeysWith: { $1 })
        let unknown = report.revenue.priceUnknown.map(\.sales).reduce(0, +)
        return Section(
            id: "revenue-\(currency.lowercased())", title: "Revenue in \(currency) per month",
            chart: StackedChart(
                style: .bars,
                series: [
                    ChartSeries(name: "net", color: ChartPalette.green, values: months.map { Double($0.netMilliunits) / 1000 }),
                    ChartSeries(name: "refunded", color: ChartPalette.vermillion, values: months.map { Double($0.refundedMilliunits) / 1000 }),
                ],
                xLabels: months.map { TrailReport.date($0.startMs) }, xTitle: "month (UTC)", yTitle: currency),
            definition: """
                From the ledger of Apple's transactions: gross is what the month's purchases and renewals cost (Apple's price, before \
                Apple's commission and taxes), refunded what Apple refunded that month (a prorated refund by its share), each transaction \
                once; net = gross − refunded, the bar's height is gross. Recovered from billing retry: the renewals that ended a billing \
                retry or its grace period (part of the gross), by the recovery's date, with their count. MRR: the paid periods running at the month's end, each price \
                spread over a month by its period. A Family Sharing member's transaction is not revenue. \(unknown) transactions of these \
                days have no known price (verifyReceipt carries none) and are counted nowhere here.
                """,
            columns: [
                "month", "transactions", "gross", "refunds", "refunded", "net", "refund rate (count)", "refund rate (money)",
                "recovered from billing retry", "MRR at month end",
            ],
            rows: months.map { m in
                [
                    TrailReport.date(m.startMs), String(m.transactions), amount(m.grossMilliunits), String(m.refunds), amount(m.refundedMilliunits),
                    amount(m.netMilliunits), m.refundRateByCount.map(share) ?? "–", m.refundRateByMoney.map(share) ?? "–",
                    "\(amount(m.recoveredMilliunits)) (\(m.recoveries))", mrr[monthKey(m.startMs)].map(amount) ?? "–",
                ]
            })
    }

    static let offerNames = [1: "introductory", 2: "promotional", 3: "offer code", 4: "win-back"]

    static func offers(_ report: TrailReport) -> Section {
        let cohorts = report.revenue.offers
        let months = Array(Set(cohorts.map(\.monthMs))).sorted()
        func total(_ month: Int64, _ value: (RevenueReport.OfferCohort) -> Int) -> Double {
            Double(cohorts.filter { $0.monthMs == month }.map(value).reduce(0, +))
        }
        return Section(
            id: "offers", title: "Offers started per month, and their conversion",
            chart: StackedChart(
                style: .bars,
                series: [
                    ChartSeries(name: "converted to a paid period", color: ChartPalette.green, values: months.map { total($0, \.converted) }),
                    ChartSeries(name: "not (yet)", color: ChartPalette.grey, values: months.map { total($0, \.starts) - total($0, \.converted) }),
                ],
                xLabels: months.map { TrailReport.date($0) }, xTitle: "month the offer started (UTC)", yTitle: "offers"),
            definition: """
                Free trials, introductory prices, promotional offers, offer codes and win-back offers, by the month each started (a chain's \
                first transaction of that offer), and how many a later period at the full price followed that was not refunded. A recent \
                month's conversion is still open: its offers have not all ended.
                """,
            columns: ["month", "offer", "discount", "starts", "converted", "conversion"],
            rows: cohorts.map { c in
                [
                    TrailReport.date(c.monthMs), offerNames[c.offerType] ?? String(c.offerType), c.discountType.isEmpty ? "–" : c.discountType.lowercased(),
                    String(c.starts), String(c.converted), c.conversion.map(share) ?? "–",
                ]
            })
    }

    /// A month's key, to match a month's start with an instant inside it: "2026-09".
    static func monthKey(_ ms: Int64) -> String { String(TrailReport.date(ms).prefix(7)) }

    /// Milliunits as an amount with two decimals: 10990 → 10.99.
    static func amount(_ milliunits: Int64) -> String { String(format: "%.2f", Double(milliunits) / 1000) }
}
