/// The report's reads of the trail and the run history, on any ``SQLStore``.
extension SubscriptionTrail where Self: SQLStore {
    /// The trail in `id` order, a page at a time (the report's one pass), each row read as it
    /// comes: SQLite's a row each in order, PostgreSQL's packed (``PackedRows``) and sorted here.
    @inlinable
    public func trailEvents(in ids: Range<Int64>) async throws -> [TrailEvent] {
        let page = SubscriptionEventsSQL.trailPage(dialect, ids)
        switch dialect {
        case .sqlite: return try await rows(page) { try SubscriptionEventsSQL.trailEvent(&$0) }
        case .postgres: return try await packedRows(page) { try SubscriptionEventsSQL.trailEvent(&$0) }.sorted { $0.id < $1.id }
        }
    }

    public func trailEventIDs() async throws -> ClosedRange<Int64>? {
        try await firstRow(SubscriptionEventsSQL.eventIDRange) { try SubscriptionEventsSQL.eventIDs(&$0) } ?? nil
    }

    public func runs(last count: Int) async throws -> [RunRecord] {
        try await rows(PollRunsSQL.latest(dialect, count: count)) { try PollRunsSQL.record(&$0) }
    }

    /// The ledger's sums, and MRR's movement beside them on a connection of its own: each is a
    /// pass over the ledger, and the report waits for the later of the trail's pass and these.
    public func revenueSums(toMs: Int64, environment: String?) async throws -> RevenueReport.Sums {
        async let movements = mrrMovement(toMs: toMs, environment: environment)
        let sales = try await rows(RevenueSQL.sales(toMs: toMs, environment: environment)) { row in
            RevenueReport.Sums.Sale(
                day: try row.column(), expiresDay: try row.column(), currency: try row.column(), count: try row.column(), priced: try row.column(),
                milliunits: try row.column(), paying: try row.column(), monthlyMilliunits: try row.column(), recoveries: try row.column(),
                pricedRecoveries: try row.column(), recoveredMilliunits: try row.column())
        }
        let refunds = try await rows(RevenueSQL.refunds(toMs: toMs, environment: environment)) { row in
            RevenueReport.Sums.Refund(day: try row.column(), currency: try row.column(), count: try row.column(), priced: try row.column(), milliunits: try row.column())
        }
        let offers = try await rows(RevenueSQL.offers(dialect, toMs: toMs, environment: environment)) { row in
            RevenueReport.Sums.Offer(day: try row.column(), offerType: try row.column(), discountType: try row.column(), starts: try row.column(), converted: try row.column())
        }
        return RevenueReport.Sums(sales: sales, refunds: refunds, offers: offers, movements: try await movements)
    }
}

extension SQLStore {
    /// MRR's movement: the ledger's paid periods a page of subscriptions at a time (a range of
    /// ids, found by the ledger's index in subscription order), folded as they come.
    func mrrMovement(toMs: Int64, environment: String?, pageSize: Int64 = 5_000) async throws -> [RevenueReport.MRRMovement] {
        var fold = MRRMovementFold(toMs: toMs)
        let range = try await firstRow(RevenueSQL.subscriptionIDs) { row -> ClosedRange<Int64>? in
            guard let first: Int64 = try row.column(), let last: Int64 = try row.column() else { return nil }
            return first...last
        }
        guard let range = range ?? nil else { return [] }
        var start = range.lowerBound
        while start <= range.upperBound {
            let page = start..<min(start + pageSize, range.upperBound + 1)
            let statement = RevenueSQL.paidPeriods(dialect, subscriptions: page, toMs: toMs, environment: environment)
            let periods: [PaidPeriod]
            switch dialect {
            case .sqlite: periods = try await rows(statement) { try PaidPeriod(&$0) }
            case .postgres: periods = try await packedRows(statement) { try PaidPeriod(&$0) }
            }
            fold.add(periods)
            start = page.upperBound
            // Ids with nothing between them (rows deleted, a sequence's skipped values): on to the next one the ledger names.
            if periods.isEmpty, start <= range.upperBound {
                let next = try await firstRow(RevenueSQL.firstSubscriptionID(from: start)) { row -> Int64? in try row.column() }
                start = (next ?? nil) ?? range.upperBound + 1
            }
        }
        return fold.finish()
    }
}
