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
    /// PostgreSQL reads the sums in one transaction of ``RevenueSQL/sumsPlanSettings``; SQLite
    /// outside one (its transactions are the writer's, which a night's run waits for).
    public func revenueSums(toMs: Int64, environment: String?) async throws -> RevenueReport.Sums {
        async let movements = mrrMovement(toMs: toMs, environment: environment)
        let sales = RevenueSQL.sales(toMs: toMs, environment: environment), refunds = RevenueSQL.refunds(toMs: toMs, environment: environment)
        let offers = RevenueSQL.offers(dialect, toMs: toMs, environment: environment)
        var sums: RevenueReport.Sums
        switch dialect {
        case .sqlite:
            sums = RevenueReport.Sums(
                sales: try await rows(sales) { try .init(&$0) }, refunds: try await rows(refunds) { try .init(&$0) },
                offers: try await rows(offers) { try .init(&$0) })
        case .postgres:
            sums = try await transaction { session in
                for setting in RevenueSQL.sumsPlanSettings { try await session.execute(setting) }
                return RevenueReport.Sums(
                    sales: try await session.rows(sales) { try .init(&$0) }, refunds: try await session.rows(refunds) { try .init(&$0) },
                    offers: try await session.rows(offers) { try .init(&$0) })
            }
        }
        sums.movements = try await movements
        return sums
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
