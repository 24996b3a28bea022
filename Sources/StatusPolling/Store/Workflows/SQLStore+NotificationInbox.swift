import EntitlementCore

/// The notification inbox on any ``SQLStore``: a batch received in one transaction
/// (``NotificationWriter``), the notifications waiting for a row, the history checkpoint.
extension NotificationInbox where Self: SQLStore {
    public func receive(_ notifications: [ReceivedNotification], ingest: NotificationIngest, nowMs: Int64) async throws -> [NotificationOutcome] {
        guard !notifications.isEmpty else { return [] }
        let dialect = self.dialect, leases = workShare != nil, outbox = writesOutbox
        return try await transaction { session in
            var writer = NotificationWriter(session: session, dialect: dialect, leases: leases, outbox: outbox, ingest: ingest, nowMs: nowMs)
            return try await writer.receive(notifications)
        }
    }

    public func waitingForAdoption(limit: Int) async throws -> [(id: String, signedPayload: String)] {
        try await rows(NotificationsSQL.waitingForAdoption(limit: limit)) { try NotificationsSQL.waiting(&$0) }
    }

    public func historyCheckpoint(_ environment: AppStoreEnvironment) async throws -> Int64? {
        try await firstRow(NotificationsSQL.historyCheckpoint(environment)) { row -> Int64 in try row.column() }
    }

    public func setHistoryCheckpoint(_ environment: AppStoreEnvironment, readFromMs: Int64, throughMs: Int64, nowMs: Int64) async throws -> Int64 {
        let statement = NotificationsSQL.setHistoryCheckpoint(dialect, environment, readFromMs: readFromMs, throughMs: throughMs, nowMs: nowMs)
        return try await commit([statement]) { row -> Int64? in try row.column() }.first.flatMap { $0 } ?? readFromMs
    }
}
