import Foundation
import GRDB
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
@testable import StatusPolling

/// What only the SQLite store has, on real files: WAL, its migrations, missing, unmigrated, newer
/// and locked files. The contract both stores keep is in ``StoreContractTests``.
@Suite struct SQLiteStoreTests {
    @Test func migrateIsIdempotentAndCreatesTheContract() async throws {
        try await withTemporaryDatabase { db in
            let again = try SQLiteSubscriptionStore.migrate(path: db.path)
            try again.store.close()
            #expect(again.applied == [])
            let columns = try db.webService.read { d in try Row.fetchAll(d, sql: "PRAGMA table_info(subscriptions)").map { $0["name"] as String } }
            #expect(Array(columns.prefix(13)) == [
                "id", "user_id", "latest_receipt", "original_transaction_id", "product_id", "environment", "expires_at",
                "grace_period_expires_at", "is_in_billing_retry", "auto_renew_status", "auto_renew_product_id",
                "expiration_intent", "cancelled_at",
            ])
            let viewColumns = try db.webService.read { d in try Row.fetchAll(d, sql: "PRAGMA table_info(entitlements)").map { $0["name"] as String } }
            for name in ["user_id", "product_id", "expires_at", "grace_period_expires_at", "is_in_billing_retry", "state", "is_entitled"] {
                #expect(viewColumns.contains(name))
            }
            let journal = try db.webService.read { d in try String.fetchOne(d, sql: "PRAGMA journal_mode") }
            #expect(journal == "wal")
        }
    }

    @Test func firstMigrationReportsWhatItApplied() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, applied) = try SQLiteSubscriptionStore.migrate(path: directory.appendingPathComponent("x.sqlite").path)
        try store.close()
        #expect(applied == ["v1: subscriptions and entitlements", "v2: run history, audit trail, backfill targets", "v3: index-backed nightly selection", "v4: the backend that answered", "v5: hear the end of billing retry, and a user's every row on an upload", "v6: the lapsed sweep", "v7: who brought an answer, and the newer answer wins", "v8: App Store Server Notifications", "v9: notification history checkpoints", "v10: rows with fresh Apple data", "v11: the build of each run", "v12: the chain's transactions, and Apple's status as the check", "v13: events outbox", "v14: renewal extensions", "v15: consumption requests", "v16: when an endpoint got each event", "v17: retention", "v18: the transaction ledger", "v19: recoveries in the ledger", "v20: paid periods in subscription order", "v21: the notification lag on the audit trail", "v22: the report's columns on the audit trail", "v23: the ledger's offers in subscription order"])
    }

    @Test func openRefusesMissingUnmigratedAndNewerDatabases() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.sqlite").path
        #expect(throws: StoreError.missing(path: missing)) { try SQLiteSubscriptionStore.open(path: missing) }
        #expect(!FileManager.default.fileExists(atPath: missing))

        let empty = directory.appendingPathComponent("empty.sqlite").path
        try DatabaseQueue(path: empty).close()
        #expect(throws: StoreError.notMigrated(path: empty, current: nil, required: "v23: the ledger's offers in subscription order")) { try SQLiteSubscriptionStore.open(path: empty) }

        // An older schema: v1 and v2 applied by an older binary.
        let older = directory.appendingPathComponent("older.sqlite").path
        let olderQueue = try DatabaseQueue(path: older)
        try SQLiteSchema.migrator.migrate(olderQueue, upTo: "v2: run history, audit trail, backfill targets")
        try olderQueue.close()
        #expect(throws: StoreError.notMigrated(path: older, current: "v2: run history, audit trail, backfill targets", required: "v23: the ledger's offers in subscription order")) {
            try SQLiteSubscriptionStore.open(path: older)
        }
        #expect(StoreError.notMigrated(path: older, current: "v2: x", required: "v3: y").description
            == "the database at \(older) is at schema 'v2: x'; this status-poller needs 'v3: y'. Run `status-poller migrate --database \(older)` first.")

        let newer = directory.appendingPathComponent("newer.sqlite").path
        try SQLiteSubscriptionStore.migrate(path: newer).store.close()
        let queue = try DatabaseQueue(path: newer)
        try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')") }
        try queue.close()
        #expect(throws: StoreError.schemaTooNew(path: newer, unknown: ["v99: from the future"], known: "v23: the ledger's offers in subscription order")) {
            try SQLiteSubscriptionStore.open(path: newer)
        }
        // `migrate` refuses it too, and leaves it as it was.
        #expect(throws: StoreError.schemaTooNew(path: newer, unknown: ["v99: from the future"], known: "v23: the ledger's offers in subscription order")) {
            try SQLiteSubscriptionStore.migrate(path: newer)
        }

        let garbage = directory.appendingPathComponent("garbage.sqlite").path
        try Data("this is not a database, just text that is long enough to have a header".utf8).write(to: URL(fileURLWithPath: garbage))
        #expect(throws: StoreError.corrupt(path: garbage, reason: "file is not a database")) { try SQLiteSubscriptionStore.open(path: garbage) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: garbage)) == Data("this is not a database, just text that is long enough to have a header".utf8))
    }

    @Test func aDatabaseLockedPastTheBusyTimeoutIsReportedAsBusy() async throws {
        try await withTemporaryDatabase { db in
            // Only the holder has the file open, as when a backup or the web service locks it.
            try db.store.close()
            try db.webService.close()
            let holder = try DatabaseQueue(path: db.path)
            try await holder.writeWithoutTransaction { d in
                try d.execute(sql: "BEGIN IMMEDIATE")
                #expect(throws: StoreError.busy(path: db.path, seconds: 0.2)) { try SQLiteSubscriptionStore.open(path: db.path, busyTimeout: 0.2) }
                try d.execute(sql: "ROLLBACK")
            }
            try holder.close()
            try SQLiteSubscriptionStore.open(path: db.path).close()
            #expect("\(StoreError.busy(path: "x.sqlite", seconds: 10))".contains("more than 10 s"))
        }
    }

}
