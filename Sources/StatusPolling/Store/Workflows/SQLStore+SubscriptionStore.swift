import EntitlementCore

/// The run's reads of rows, on any ``SQLStore``: the rows due, its pages, and who owns a chain.
extension SubscriptionStore where Self: SQLStore {
    public func dueSelection(_ selection: RowSelection, nowMs: Int64, after cursor: Int64) async throws -> DueSelection {
        let statement = DueSelectionSQL.select(dialect, selection, nowMs: nowMs, after: cursor, shared: workShare != nil)
        let rows = try await rows(statement) { row -> (id: Int64, fresh: Bool) in (try row.column(), try row.column()) }
        return DueSelectionSQL.due(rows, after: cursor)
    }

    @inlinable
    public func subscriptions(ids: [Int64]) async throws -> [SubscriptionRow] {
        guard !ids.isEmpty else { return [] }
        return try await rows(SubscriptionRowSQL.rows(ids: ids)) { try SubscriptionRowSQL.row(&$0) }
    }

    public func subscriptionID(owning originalTransactionID: String) async throws -> Int64? {
        try await firstRow(SubscriptionRowSQL.owner(of: originalTransactionID)) { row -> Int64 in try row.column() }
    }
}
