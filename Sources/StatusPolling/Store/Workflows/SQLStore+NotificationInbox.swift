/// The notification inbox's reads and its history checkpoint, on any ``SQLStore``. (Receiving
/// notifications is still each store's: `docs/design/STORE-SEAM.md`, step 11.)
extension NotificationInbox where Self: SQLStore {
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
