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
}
