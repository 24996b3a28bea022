/// The report's reads of the trail and the run history, on any ``SQLStore``.
extension SubscriptionTrail where Self: SQLStore {
    /// The trail in `id` order, a page at a time (the report's one pass), each row read as it comes.
    @inlinable
    public func trailEvents(in ids: Range<Int64>) async throws -> [TrailEvent] {
        try await rows(SubscriptionEventsSQL.trailPage(dialect, ids)) { try SubscriptionEventsSQL.trailEvent(&$0) }
    }

    public func trailEventIDs() async throws -> ClosedRange<Int64>? {
        try await firstRow(SubscriptionEventsSQL.eventIDRange) { try SubscriptionEventsSQL.eventIDs(&$0) } ?? nil
    }

    public func runs(last count: Int) async throws -> [RunRecord] {
        try await rows(PollRunsSQL.latest(dialect, count: count)) { try PollRunsSQL.record(&$0) }
    }

    public func revenue(fromMs: Int64, toMs: Int64, environment: String?) async throws -> RevenueReport {
        typealias Sums = (day: Int64, currency: String, count: Int, priced: Int, milliunits: Int64)
        let read: @Sendable (inout Session.Columns) throws -> Sums = { row in (try row.column(), try row.column(), try row.column(), try row.column(), try row.column()) }
        let sales = try await rows(RevenueSQL.sales(fromMs: fromMs, toMs: toMs, environment: environment), read)
        let refunds = try await rows(RevenueSQL.refunds(fromMs: fromMs, toMs: toMs, environment: environment), read)
        let offers = try await rows(RevenueSQL.offers(fromMs: fromMs, toMs: toMs, environment: environment)) { row in
            (day: try row.column(Int64.self), offerType: try row.column(Int.self), discountType: try row.column(String.self), starts: try row.column(Int.self),
             converted: try row.column(Int.self))
        }
        let ends = RevenueReport.monthEnds(fromMs: fromMs, toMs: toMs)
        var byCurrency: [[RevenueReport.MonthlyRecurringRevenue]] = []
        if !ends.isEmpty {
            byCurrency = try await rows(RevenueSQL.monthlyRecurringRevenue(at: ends, environment: environment)) { row in
                let currency: String = try row.column()
                return try ends.map { atMs in
                    RevenueReport.MonthlyRecurringRevenue(atMs: atMs, currency: currency, subscriptions: try row.column(), milliunits: try row.column())
                }
            }
        }
        let mrr = byCurrency.joined().filter { $0.subscriptions > 0 }.sorted { ($0.atMs, $0.currency) < ($1.atMs, $1.currency) }
        return RevenueReport(sales: sales, refunds: refunds, offers: offers, monthlyRecurringRevenue: mrr)
    }
}
