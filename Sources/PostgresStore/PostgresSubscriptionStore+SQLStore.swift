import PostgresNIO
import StatusPolling

/// The seam the library's workflows run on (``SQLStore``): the shared statements through
/// PostgresNIO, a read on a pooled connection, a transaction on one, errors as the store's.
extension PostgresSubscriptionStore: SQLStore {
    public var dialect: SQLDialect { .postgres }

    /// Every process is a worker sharing the database's work, by leases.
    public var workShare: WorkShare? { share }

    public func execute(_ statement: SQLStatement) async throws {
        try await read { connection, logger in try await connection.execute(statement, logger: logger) }
    }

    public func rows<T: Sendable>(_ statement: SQLStatement, _ read: @Sendable (inout RowReader) throws -> T) async throws -> [T] {
        try await self.read { connection, logger in try await connection.rows(statement, logger: logger, read) }
    }

    /// `body` in a transaction. What the body itself throws comes out as it is (as on SQLite);
    /// what the database throws, as the store maps it.
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresSession) async throws -> T) async throws -> T {
        try await transaction { connection, logger in
            do {
                return try await body(PostgresSession(connection: connection, logger: logger))
            } catch let error where !(error is PSQLError) {
                throw WorkflowFailure(error: error)
            }
        }
    }
}
