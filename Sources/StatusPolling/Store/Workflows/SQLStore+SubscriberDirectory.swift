import EntitlementCore
import Foundation

/// The web service's side (enrol, upload a receipt, look a user up) and the operator's reads of
/// the audit trail and the recorded notifications, on any ``SQLStore``.
extension SubscriberDirectory where Self: SQLStore {
    @discardableResult
    public func enroll(userID: String, receipt: String) async throws -> Int64 {
        try await enroll([(userID, receipt)])[0]
    }

    public func enroll(_ subscribers: [(userID: String, receipt: String)]) async throws -> [Int64] {
        guard !subscribers.isEmpty else { return [] }
        let chunks = stride(from: 0, to: subscribers.count, by: SubscriptionRowSQL.enrollChunk).map { start in
            SubscriptionRowSQL.enroll(subscribers[start..<min(start + SubscriptionRowSQL.enrollChunk, subscribers.count)])
        }
        return try await commit(chunks) { row -> Int64 in try row.column() }.flatMap { $0.sorted() }
    }

    public func uploadReceipt(subscriptionID: Int64, receipt: String) async throws {
        try await commit(SubscriptionRowSQL.upload(receipt, subscriptionID: subscriptionID))
    }

    public func subscriptions(userID: String) async throws -> [SubscriptionRow] {
        try await rows(SubscriptionRowSQL.rows(userID: userID)) { try SubscriptionRowSQL.row(&$0) }
    }

    public func subscriptionsWithBookkeeping(userID: String) async throws -> [(SubscriptionRow, SubscriptionBookkeeping)] {
        try await rows(SubscriptionRowSQL.rows(userID: userID, bookkeeping: true)) {
            (try SubscriptionRowSQL.row(&$0), try SubscriptionRowSQL.bookkeeping(&$0))
        }
    }

    public func subscriptionsWithBookkeeping(after cursor: Int64, limit: Int) async throws -> [(SubscriptionRow, SubscriptionBookkeeping)] {
        try await rows(SubscriptionRowSQL.rowsWithBookkeeping(after: cursor, limit: limit)) {
            (try SubscriptionRowSQL.row(&$0), try SubscriptionRowSQL.bookkeeping(&$0))
        }
    }

    public func history(userID: String, limit: Int) async throws -> [SubscriptionEvent] {
        try await rows(SubscriptionEventsSQL.history(userID: userID, limit: limit)) { try SubscriptionEventsSQL.event(&$0, decoder: JSONDecoder()) }
    }

    public func ledger(transactionIDs: [String]) async throws -> [LedgerRecord] {
        guard !transactionIDs.isEmpty else { return [] }
        return try await rows(LedgerSQL.records(of: transactionIDs)) { try LedgerSQL.record(&$0) }
    }

    public func ledger(after cursor: String, limit: Int) async throws -> [LedgerRecord] {
        try await rows(LedgerSQL.records(after: cursor, limit: limit)) { try LedgerSQL.record(&$0) }
    }

    public func notifications(_ query: NotificationQuery) async throws -> [StoredNotification] {
        try await rows(NotificationsSQL.list(query)) { try NotificationsSQL.stored(&$0) }
    }
}
