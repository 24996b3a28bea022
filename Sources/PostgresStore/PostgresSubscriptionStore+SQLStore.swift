import StatusPolling

/// The seam the library's workflows run on (``SQLStore``): the shared statements through
/// PostgresNIO, a read on a pooled connection, a transaction on one, errors as the store's.
extension PostgresSubscriptionStore: SQLStore {
    public var dialect: SQLDialect { .postgres }

    public func rows<T: Sendable>(_ statement: SQLStatement, _ read: @Sendable (inout RowReader) throws -> T) async throws -> [T] {
        try await self.read { connection, logger in try await connection.rows(statement, logger: logger, read) }
    }

    public func commit<T: Sendable>(_ statements: [SQLStatement], reading read: @Sendable (inout RowReader) throws -> T) async throws -> [[T]] {
        try await transaction { connection, logger in
            var rows: [[T]] = []
            for statement in statements { rows.append(try await connection.rows(statement, logger: logger, read)) }
            return rows
        }
    }
}
