import Foundation
import GRDB
import StatusPolling

/// The SQLite store: a GRDB `DatabasePool` in WAL mode, so the web service keeps reading
/// entitlements while a run writes.
public final class SQLiteSubscriptionStore: PollingStore {
    let pool: DatabasePool
    public let path: String

    /// How long a connection waits for a lock held by another process (the web service, a backfill).
    public static let defaultBusyTimeout: TimeInterval = 10

    private init(pool: DatabasePool, path: String) {
        self.pool = pool
        self.path = path
    }

    /// Opens (creating if needed) the database at `path` and applies every pending migration.
    /// Safe to run on every deploy: applied migrations are skipped.
    public static func migrate(path: String, busyTimeout: TimeInterval = defaultBusyTimeout) throws -> (store: SQLiteSubscriptionStore, applied: [String]) {
        let pool = try openPool(path: path, busyTimeout: busyTimeout)
        let migrator = SQLiteSchema.migrator
        let applied = try Self.mapping(path) { try pool.read { db in try migrator.appliedIdentifiers(db) } }
        try Self.mapping(path) { try pool.read { db in try Self.refuseNewerSchema(db, path: path) } }
        try Self.mapping(path) { try migrator.migrate(pool) }
        let now = try pool.read { db in try migrator.appliedIdentifiers(db) }
        return (SQLiteSubscriptionStore(pool: pool, path: path), SQLiteSchema.identifiers.filter { now.contains($0) && !applied.contains($0) })
    }

    /// Opens an existing, fully migrated database. Never creates one: a typo in `--database` must
    /// not silently poll an empty file.
    public static func open(path: String, busyTimeout: TimeInterval = defaultBusyTimeout) throws -> SQLiteSubscriptionStore {
        guard FileManager.default.fileExists(atPath: path) else { throw StoreError.missing(path: path) }
        let pool = try openPool(path: path, busyTimeout: busyTimeout)
        let migrator = SQLiteSchema.migrator
        try Self.mapping(path) {
            try pool.read { db in
                try Self.refuseNewerSchema(db, path: path)
                if try !migrator.hasCompletedMigrations(db) {
                    let applied = try migrator.appliedIdentifiers(db)
                    throw StoreError.notMigrated(path: path, current: SQLiteSchema.identifiers.last(where: applied.contains), required: SQLiteSchema.latest)
                }
            }
        }
        return SQLiteSubscriptionStore(pool: pool, path: path)
    }

    /// A database migrated by a newer binary is never touched: its meaning may have changed.
    private static func refuseNewerSchema(_ db: Database, path: String) throws {
        guard try db.tableExists("grdb_migrations") else { return }
        let unknown = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations").filter { !SQLiteSchema.identifiers.contains($0) }
        if !unknown.isEmpty { throw StoreError.schemaTooNew(path: path, unknown: unknown.sorted(), known: SQLiteSchema.latest) }
    }

    /// SQLite's errors, as the store's: what happened and what to do.
    static func storeError(_ error: DatabaseError, path: String, busyTimeout: TimeInterval = defaultBusyTimeout, writing: Bool = false) -> StoreError {
        let reason = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: return .busy(path: path, seconds: busyTimeout)
        case .SQLITE_CANTOPEN where !FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent):
            return .unreadable(path: path, reason: "its directory \((path as NSString).deletingLastPathComponent) does not exist")
        case .SQLITE_NOTADB, .SQLITE_CORRUPT: return writing ? .unwritable(path: path, reason: reason) : .corrupt(path: path, reason: reason)
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_AUTH, .SQLITE_CANTOPEN:
            return writing ? .unwritable(path: path, reason: reason) : .permissionDenied(path: path, reason: reason)
        case .SQLITE_FULL, .SQLITE_IOERR: return writing ? .unwritable(path: path, reason: reason) : .unreadable(path: path, reason: reason)
        default: return writing ? .unwritable(path: path, reason: reason) : .unreadable(path: path, reason: reason)
        }
    }

    /// Runs `body`, turning SQLite's errors into ``StoreError``s.
    static func mapping<T>(_ path: String, writing: Bool = false, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw storeError(error, path: path, writing: writing)
        }
    }

    private static func openPool(path: String, busyTimeout: TimeInterval) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "status-poller"
        // WAL with synchronous=NORMAL: a committed answer survives a crash of the process; a power
        // loss can roll back the last few commits, which the next run simply verifies again.
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // The writer's page cache at 32 MiB instead of SQLite's 2: a poll's batch of 100 rows
            // dirties ~260 pages (each row's page, its audit row and event, their indexes), and
            // with ~500 pages of cache SQLite spilled some into the WAL before the commit wrote
            // them again, then read back from the WAL what the next batch needed. Over 25,600 rows:
            // bytes written 833 → 630 MB, read 673 → 505 MB, 4 % of the run's CPU, for up to
            // 32 MiB more memory (RSS 83 → 107 MB at c = 256). Readers keep the default: they
            // read each receipt once.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -32768") }
        }
        do {
            return try DatabasePool(path: path, configuration: configuration)
        } catch let error as DatabaseError {
            throw storeError(error, path: path, busyTimeout: busyTimeout)
        }
    }

    /// Inserts a subscriber as the web service does: a user and a receipt, nothing verified.
    @discardableResult
    public func enroll(userID: String, receipt: String) async throws -> Int64 {
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO subscriptions (user_id, latest_receipt) VALUES (?, ?)", arguments: [userID, receipt])
            return db.lastInsertedRowID
        }
    }

    /// Inserts many subscribers in one transaction (an import, the demo's enrolment); returns their ids in order.
    public func enroll(_ subscribers: [(userID: String, receipt: String)]) async throws -> [Int64] {
        try await pool.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO subscriptions (user_id, latest_receipt) VALUES (?, ?)")
            return try subscribers.map { subscriber in
                try statement.execute(arguments: [subscriber.userID, subscriber.receipt])
                return db.lastInsertedRowID
            }
        }
    }

    /// The row with `id`, as the run would read it.
    public func subscription(id: Int64) async throws -> SubscriptionRow? {
        try await pool.read { db in try SubscriptionRecord.fetchOne(db, key: id)?.row }
    }

    /// The rows of `userID`, as the run would read them.
    public func subscriptions(userID: String) async throws -> [SubscriptionRow] {
        try await pool.read { db in
            try SubscriptionRecord.filter(Column("user_id") == userID).order(Column("id")).fetchAll(db).map(\.row)
        }
    }

    /// Stores a receipt the app uploaded, as the web service does; the next run verifies it.
    public func uploadReceipt(subscriptionID: Int64, receipt: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE subscriptions SET latest_receipt = ? WHERE id = ?", arguments: [receipt, subscriptionID])
        }
    }

    /// One page of every row, in `id` order, with its bookkeeping: for checks and reports that walk
    /// the whole table without loading it at once.
    public func subscriptionsWithBookkeeping(after cursor: Int64, limit: Int) async throws -> [(SubscriptionRow, SubscriptionBookkeeping)] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.withBookkeepingColumns) FROM subscriptions WHERE id > ? ORDER BY id LIMIT ?", arguments: [cursor, limit]).map(Self.withBookkeeping)
        }
    }

    /// The columns of a row and its bookkeeping, in the order ``withBookkeeping(_:)`` reads them.
    static let withBookkeepingColumns = "\(SubscriptionRecord.columnList), \(BookkeepingRecord.columnList)"

    /// One row of ``withBookkeepingColumns`` as the domain's row and its bookkeeping.
    static func withBookkeeping(_ row: Row) -> (SubscriptionRow, SubscriptionBookkeeping) {
        (SubscriptionRecord(row: row).row, BookkeepingRecord.bookkeeping(row, from: SubscriptionRecord.columnCount))
    }

    /// Closes the pool; further calls fail.
    public func close() throws { try pool.close() }
}
