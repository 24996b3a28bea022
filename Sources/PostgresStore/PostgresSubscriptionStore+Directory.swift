import Foundation
import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
    public func history(userID: String, limit: Int) async throws -> [SubscriptionEvent] {
        try await read { connection, logger in
            let decoder = JSONDecoder()
            return try await connection.rows(SubscriptionEventsSQL.history(userID: userID, limit: limit), logger: logger) { reader in
                try SubscriptionEventsSQL.event(&reader, decoder: decoder)
            }
        }
    }

    public func notifications(_ query: NotificationQuery) async throws -> [StoredNotification] {
        try await read { connection, logger in try await connection.rows(NotificationsSQL.list(query), logger: logger, NotificationsSQL.stored) }
    }
}
