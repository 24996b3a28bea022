import Foundation
import GRDB

/// Guards the demo against replacing a real database by a typo in `--database`.
public enum DemoDatabase {
    /// True when nothing is at `path`, or it holds only the demo's simulated users.
    public static func isReplaceable(_ path: String) -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return true }
        guard let queue = try? DatabaseQueue(path: path) else { return false }
        defer { try? queue.close() }
        return (try? queue.read { db in
            guard try db.tableExists("subscriptions") else {
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0
            }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM subscriptions WHERE user_id NOT LIKE 'sim-user-%'") == 0
        }) ?? false
    }
}
