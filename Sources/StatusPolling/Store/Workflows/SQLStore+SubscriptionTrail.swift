/// The report's small reads of the trail and the run history, on any ``SQLStore``. (The trail's
/// pages are still each store's: `docs/design/STORE-SEAM.md`, step 6.)
extension SubscriptionTrail where Self: SQLStore {
    public func trailEventIDs() async throws -> ClosedRange<Int64>? {
        try await firstRow(SubscriptionEventsSQL.eventIDRange) { try SubscriptionEventsSQL.eventIDs(&$0) } ?? nil
    }

    public func runs(last count: Int) async throws -> [RunRecord] {
        try await rows(PollRunsSQL.latest(dialect, count: count)) { try PollRunsSQL.record(&$0) }
    }
}
