import GRDB
import StatusPolling

/// A workflow's connection inside a SQLite transaction: GRDB's writer connection, used only on
/// its thread (``InlineExecutor`` runs the workflow there), hence `@unchecked Sendable`.
public struct SQLiteSession: SQLSession, @unchecked Sendable {
    let db: Database

    public func execute(_ statement: SQLStatement) throws {
        try db.execute(shared: statement)
    }

    public func rows<T>(_ statement: SQLStatement, _ read: (inout SQLiteColumns) throws -> T) throws -> [T] {
        try db.fetchAll(shared: statement, read)
    }
}
