import EntitlementCore
import Foundation
import GRDB
@testable import SQLiteStore
import StatusPolling

/// A fresh migrated SQLite file in its own temporary directory, plus a second connection that
/// plays the web service (inserting subscribers, reading the `entitlements` view).
struct TemporaryDatabase: Sendable {
    let directory: URL
    let path: String
    let store: SQLiteSubscriptionStore
    /// The web service's own connection.
    let webService: DatabasePool

    /// `preparing` may leave a database at `path` first (an older schema with rows, for an upgrade).
    init(preparing: (_ path: String) throws -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("status-poller-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("subscriptions.sqlite").path
        try preparing(path)
        store = try SQLiteSubscriptionStore.migrate(path: path).store
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        webService = try DatabasePool(path: path, configuration: configuration)
    }

    func remove() {
        try? store.close()
        try? webService.close()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Inserts a row with the given contract columns, as a web service (or an earlier run) left it.
    @discardableResult
    func insert(userID: String, receipt: String, _ state: SubscriptionState = .unverified) throws -> Int64 {
        try webService.write { db in
            var arguments: StatementArguments = [userID, receipt]
            arguments += StateColumns.arguments(state)
            try db.execute(
                sql: "INSERT INTO subscriptions (user_id, latest_receipt, \(ContractColumn.list)) VALUES (?, ?, \(StateColumns.placeholders))",
                arguments: arguments)
            return db.lastInsertedRowID
        }
    }

    /// The whole row, every column, as the web service would read it.
    func rawRow(_ id: Int64) throws -> Row? {
        try webService.read { db in try Row.fetchOne(db, sql: "SELECT * FROM subscriptions WHERE id = ?", arguments: [id]) }
    }

    /// The contract columns only, for "nothing changed" checks.
    func contractColumns(_ id: Int64) throws -> [String: DatabaseValue] {
        let contract = ["user_id"] + ContractColumn.allCases.map(\.rawValue)
        guard let row = try rawRow(id) else { return [:] }
        return Dictionary(uniqueKeysWithValues: contract.map { ($0, row[$0] as DatabaseValue) })
    }
}

/// Runs `body` with a fresh database and removes it afterwards.
func withTemporaryDatabase<R>(_ body: (TemporaryDatabase) async throws -> R) async throws -> R {
    let database = try TemporaryDatabase()
    defer { database.remove() }
    return try await body(database)
}
