/// The run's reads of rows, on any ``SQLStore``: its pages, and who owns a chain.
extension SubscriptionStore where Self: SQLStore {
    @inlinable
    public func subscriptions(ids: [Int64]) async throws -> [SubscriptionRow] {
        guard !ids.isEmpty else { return [] }
        return try await rows(SubscriptionRowSQL.rows(ids: ids)) { try SubscriptionRowSQL.row(&$0) }
    }

    public func subscriptionID(owning originalTransactionID: String) async throws -> Int64? {
        try await firstRow(SubscriptionRowSQL.owner(of: originalTransactionID)) { row -> Int64 in try row.column() }
    }
}
