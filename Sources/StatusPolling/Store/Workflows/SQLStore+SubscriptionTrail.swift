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
}
