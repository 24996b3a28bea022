import Foundation
import GRDB
import StatusPolling

/// A SQLite file as a ``PollingDatabase``: the embedded default. Runs exclude each other with a
/// `flock` on a file beside it (``RunLock``).
public struct SQLiteDatabase: PollingDatabase {
    public let path: String
    /// Whether the store's writers fill the outbox (``SQLStore/writesOutbox``).
    public let writesOutbox: Bool
    public var name: String { path }

    public init(path: String, writesOutbox: Bool = true) {
        self.path = path
        self.writesOutbox = writesOutbox
    }

    public func migrate() async throws -> [String] {
        let (store, applied) = try SQLiteSubscriptionStore.migrate(path: path)
        try store.close()
        return applied
    }

    public func open() async throws -> any PollingStore {
        try SQLiteSubscriptionStore.open(path: path, writesOutbox: writesOutbox)
    }

    public func acquireRunLock(holder: RunLock.Holder) async throws -> any RunLease {
        try RunLock.acquire(path: RunLock.path(forDatabase: path), holder: holder)
    }

    /// Guards the demo against replacing a real database by a typo in `--database`.
    public func isReplaceableByDemo() async -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return true }
        guard let queue = try? DatabaseQueue(path: path) else { return false }
        defer { try? queue.close() }
        return (try? await queue.read { db in
            guard try db.tableExists("subscriptions") else {
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0
            }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM subscriptions WHERE user_id NOT LIKE 'sim-user-%'") == 0
        }) ?? false
    }

    public func recreateForDemo() async throws -> any PollingStore {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.removeItem(atPath: path + suffix)
        }
        return try SQLiteSubscriptionStore.migrate(path: path).store
    }
}
