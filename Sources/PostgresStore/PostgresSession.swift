import Logging
import PostgresNIO
import StatusPolling

/// A workflow's connection inside a PostgreSQL transaction.
public struct PostgresSession: SQLSession {
    let connection: PostgresConnection
    let logger: Logger

    public func execute(_ statement: SQLStatement) async throws {
        try await connection.execute(statement, logger: logger)
    }

    public func rows<T>(_ statement: SQLStatement, _ read: (inout RowReader) throws -> T) async throws -> [T] {
        try await connection.rows(statement, logger: logger, read)
    }
}
