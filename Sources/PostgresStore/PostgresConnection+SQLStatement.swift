import Logging
import PostgresNIO
import StatusPolling

/// Runs the library's shared statements (``SQLStatement``) with PostgreSQL's placeholders.
extension PostgresConnection {
    /// Every row of `statement`, each read by `read`.
    func rows<T>(_ statement: SQLStatement, logger: Logger, _ read: (inout RowReader) throws -> T) async throws -> [T] {
        try await PostgresSubscriptionStore.rows(query(PostgresQuery(statement), logger: logger), read)
    }

    /// Runs `statement`, its rows unread.
    func execute(_ statement: SQLStatement, logger: Logger) async throws {
        try await query(PostgresQuery(statement), logger: logger)
    }
}
