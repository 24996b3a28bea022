import GRDB
import StatusPolling

/// The seam the library's workflows run on (``SQLStore``): the shared statements through GRDB,
/// reads on the pool's readers, a transaction on its writer, SQLite's errors as the store's.
extension SQLiteSubscriptionStore: SQLStore {
    public var dialect: SQLDialect { .sqlite }

    public func execute(_ statement: SQLStatement) async throws {
        try await writing { db in try db.execute(shared: statement) }
    }

    public func rows<T: Sendable>(_ statement: SQLStatement, _ read: @Sendable (inout SQLiteColumns) throws -> T) async throws -> [T] {
        try await reading { db in try db.fetchAll(shared: statement, read) }
    }

    /// `body` inside GRDB's write transaction, run to its end on the writer's thread. A row's own
    /// trouble (a constraint, a value of the wrong type or size) comes out as it is, so a caller can
    /// retry row by row, as on PostgreSQL; the database's, as the store's error.
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLiteSession) async throws -> T) async throws -> T {
        do {
            return try await pool.write { db in
                let session = SQLiteSession(db: db)
                return try InlineExecutor.run { try await body(session) }
            }
        } catch let error as DatabaseError where !Self.rowLevel.contains(error.resultCode) {
            throw Self.storeError(error, path: path, writing: true)
        }
    }

    /// The errors that are one row's, not the database's.
    static let rowLevel: [ResultCode] = [.SQLITE_CONSTRAINT, .SQLITE_MISMATCH, .SQLITE_TOOBIG, .SQLITE_RANGE]

    /// A read, SQLite's errors as the store's.
    func reading<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path)
        }
    }

    /// A write, SQLite's errors as the store's.
    func writing<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(body)
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path, writing: true)
        }
    }
}
