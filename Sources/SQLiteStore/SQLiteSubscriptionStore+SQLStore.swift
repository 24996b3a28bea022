import GRDB
import StatusPolling

/// The seam the library's workflows run on (``SQLStore``): the shared statements through GRDB,
/// reads on the pool's readers, a transaction on its writer, SQLite's errors as the store's.
extension SQLiteSubscriptionStore: SQLStore {
    public var dialect: SQLDialect { .sqlite }

    public func rows<T: Sendable>(_ statement: SQLStatement, _ read: @Sendable (inout SQLiteColumns) throws -> T) async throws -> [T] {
        try await reading { db in try db.fetchAll(shared: statement, read) }
    }

    public func commit<T: Sendable>(_ statements: [SQLStatement], reading read: @Sendable (inout SQLiteColumns) throws -> T) async throws -> [[T]] {
        try await writing { db in try statements.map { try db.fetchAll(shared: $0, read) } }
    }
}
