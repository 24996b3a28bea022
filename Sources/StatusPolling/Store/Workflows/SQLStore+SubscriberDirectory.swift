import Foundation

/// The operator's and the web service's reads of the audit trail and the recorded notifications,
/// on any ``SQLStore``.
extension SubscriberDirectory where Self: SQLStore {
    public func history(userID: String, limit: Int) async throws -> [SubscriptionEvent] {
        try await rows(SubscriptionEventsSQL.history(userID: userID, limit: limit)) { try SubscriptionEventsSQL.event(&$0, decoder: JSONDecoder()) }
    }

    public func notifications(_ query: NotificationQuery) async throws -> [StoredNotification] {
        try await rows(NotificationsSQL.list(query)) { try NotificationsSQL.stored(&$0) }
    }
}
