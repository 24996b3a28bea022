import Foundation
import GRDB
import StatusPolling

/// The SQLite store: a GRDB `DatabasePool` in WAL mode, so the web service keeps reading
/// entitlements while a run writes.
public final class SQLiteSubscriptionStore: PollingStore {
    let pool: DatabasePool
    public let path: String
    /// See ``SQLStore/writesOutbox``.
    public let writesOutbox: Bool

    /// How long a connection waits for a lock held by another process (the web service, a backfill).
    public static let defaultBusyTimeout: TimeInterval = 10

    private init(pool: DatabasePool, path: String, writesOutbox: Bool = true) {
        self.pool = pool
        self.path = path
        self.writesOutbox = writesOutbox
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
    public static func open(path: String, busyTimeout: TimeInterval = defaultBusyTimeout, writesOutbox: Bool = true) throws -> SQLiteSubscriptionStore {
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
        return SQLiteSubscriptionStore(pool: pool, path: path, writesOutbox: writesOutbox)
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
            // Every connection keeps SQLite's 2 MiB page cache. The writer's was 32 MiB while a
            // batch of 100 changed rows dirtied ~260 pages (rows, audit rows with every null
            // column, outbox rows, their indexes) and spilled into the WAL; with snapshots without
            // nulls and no outbox unless read, the default costs no measurable CPU at c = 256
            // (0.19–0.20 CPU s per 1,000 receipts either way) and the peak heap is 33 MB instead
            // of 66 (heaptrack; the cache was 30 MB of it).
        }
        do {
            return try DatabasePool(path: path, configuration: configuration)
        } catch let error as DatabaseError {
            throw storeError(error, path: path, busyTimeout: busyTimeout)
        }
    }

    /// Closes the pool; further calls fail.
    public func close() throws { try pool.close() }
}
