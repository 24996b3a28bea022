import Foundation
import GRDB
import StatusPolling

extension SQLiteSubscriptionStore {
    /// A user's rows with their bookkeeping, in `id` order (for `show`).
    public func subscriptionsWithBookkeeping(userID: String) async throws -> [(SubscriptionRow, SubscriptionBookkeeping)] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.withBookkeepingColumns) FROM subscriptions WHERE user_id = ? ORDER BY id", arguments: [userID]).map(Self.withBookkeeping)
        }
    }

    public func history(userID: String, limit: Int) async throws -> [SubscriptionEvent] {
        try await pool.read { db in
            let decoder = JSONDecoder()
            return try db.fetchAll(shared: SubscriptionEventsSQL.history(userID: userID, limit: limit)) { row in
                try SubscriptionEventsSQL.event(&row, decoder: decoder)
            }
        }
    }

    public func notifications(_ query: NotificationQuery) async throws -> [StoredNotification] {
        try await reading { db in try db.fetchAll(shared: NotificationsSQL.list(query), NotificationsSQL.stored) }
    }
}
