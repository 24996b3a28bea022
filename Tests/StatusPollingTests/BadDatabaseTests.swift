import Foundation
import GRDB
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
@testable import StatusPolling

/// A database the poller cannot use as it is: a clear message, the documented exit code, and the
/// file exactly as it was. Through the real binary, except the full disk, which needs the
/// store's own connection to set a page limit.
@Suite struct BadDatabaseTests {
    let secret = ["APPSTORE_SHARED_SECRET": "s3cr3t"]

    /// A directory of its own that `nobody` can enter (the permission cases run as `nobody` under root).
    func withDirectory<R>(_ body: (String) async throws -> R) async throws -> R {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-bad-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
            try? FileManager.default.removeItem(atPath: directory)
        }
        return try await body(directory)
    }

    func run(_ path: String, unprivileged: Bool = false, url: String = "http://127.0.0.1:9/verifyReceipt") async throws -> StatusPollerProcess.Outcome {
        try await StatusPollerProcess.launch(
            ["run", "--database", path, "--bundle-id", AppleJSON.bundleID, "--production-url", url, "--sandbox-url", url],
            environment: secret, unprivileged: unprivileged
        ).outcome()
    }

    func migrated(_ path: String) throws {
        let (store, _) = try SQLiteSubscriptionStore.migrate(path: path)
        try store.close()
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "INSERT INTO subscriptions (user_id, latest_receipt) VALUES ('u1', 'R1')") }
        try queue.close()
    }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// Every table's schema and rows. Opening a WAL database rewrites bookkeeping in its header
    /// (GRDB creates and drops a table to set up the WAL), so "unchanged" is about content.
    func contents(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            let tables = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
            var lines = tables.map { "\($0["name"] as String): \($0["sql"] as String)" }
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                lines += try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"").map { "\(table) \($0)" }.sorted()
            }
            return lines
        }
    }

    @Test func aReadOnlyFileIsRefusedAndKept() async throws {
        try await withDirectory { directory in
            let path = directory + "/readonly.sqlite"
            try migrated(path)
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
            let before = try bytes(path)
            let outcome = try await run(path, unprivileged: true)
            #expect(outcome.status == 2)
            #expect(outcome.stderr.contains("error: cannot use the database at \(path): attempt to write a readonly database. status-poller must be able to read and write the file"), "\(outcome.stderr)")
            #expect(outcome.stdout.isEmpty)
            #expect(try bytes(path) == before)
        }
    }

    @Test func aReadOnlyDirectoryIsRefusedAndKept() async throws {
        try await withDirectory { directory in
            let inner = directory + "/locked"
            try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: false)
            let path = inner + "/subscriptions.sqlite"
            try migrated(path)
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: inner)
            let before = try bytes(path)
            let outcome = try await run(path, unprivileged: true)
            #expect(outcome.status == 2)
            #expect(outcome.stderr.contains("error: cannot use the database at \(path): "), "\(outcome.stderr)")
            #expect(outcome.stderr.contains("check the permissions of the file and of its directory."))
            #expect(try bytes(path) == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: inner) == ["subscriptions.sqlite"])
        }
    }

    @Test func aFileThatIsNotADatabaseIsRefusedAndKept() async throws {
        try await withDirectory { directory in
            let path = directory + "/notes.sqlite"
            let text = Data(String(repeating: "not a database; ", count: 300).utf8)
            try text.write(to: URL(fileURLWithPath: path))
            let outcome = try await run(path)
            #expect(outcome.status == 2)
            #expect(outcome.stderr.contains("error: the file at \(path) is not a status-poller database, or it is damaged (file is not a database). Check that --database names the right file"), "\(outcome.stderr)")
            #expect(try bytes(path) == text)

            let migrate = try await StatusPollerProcess.launch(["migrate", "--database", path]).outcome()
            #expect(migrate.status == 2)
            #expect(migrate.stderr.contains("is not a status-poller database, or it is damaged"))
            #expect(try bytes(path) == text)
        }
    }

    @Test func olderAndNewerSchemasNameBothVersions() async throws {
        try await withDirectory { directory in
            let older = directory + "/older.sqlite"
            let queue = try DatabaseQueue(path: older)
            try SQLiteSchema.migrator.migrate(queue, upTo: "v2: run history, audit trail, backfill targets")
            try queue.close()
            let tooOld = try await run(older)
            #expect(tooOld.status == 2)
            #expect(tooOld.stderr.contains(
                "error: the database at \(older) is at schema 'v2: run history, audit trail, backfill targets'; this status-poller needs 'v23: the ledger\'s offers in subscription order'. Run `status-poller migrate --database \(older)` first."),
                "\(tooOld.stderr)")
            let migrate = try await StatusPollerProcess.launch(["migrate", "--database", older]).outcome()
            #expect(migrate.status == 0)
            #expect(migrate.stdout.contains("v3: index-backed nightly selection, v4: the backend that answered, v5: hear the end of billing retry"))

            let newer = directory + "/newer.sqlite"
            try migrated(newer)
            let future = try DatabaseQueue(path: newer)
            try await future.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9: from the future')") }
            try future.close()
            let before = try contents(newer)
            #expect(before.contains("grdb_migrations [identifier:\"v9: from the future\"]"))
            let commands = [["run", "--bundle-id", AppleJSON.bundleID], ["migrate"]]
            for command in commands {
                let outcome = try await StatusPollerProcess.launch(command + ["--database", newer], environment: secret).outcome()
                #expect(outcome.status == 2)
                #expect(outcome.stderr.contains(
                    "error: the database at \(newer) was migrated by a newer status-poller ('v9: from the future'); this binary knows schema up to 'v23: the ledger\'s offers in subscription order'. Upgrade this binary; nothing was changed."),
                    "\(outcome.stderr)")
            }
            #expect(try contents(newer) == before)
        }
    }

    @Test func aPathWithSpacesAndUnicodeWorks() async throws {
        try await withDirectory { directory in
            let folder = directory + "/my databases/abonnés 日本"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let path = folder + "/premium subs ✓.sqlite"
            let migrate = try await StatusPollerProcess.launch(["migrate", "--database", path]).outcome()
            #expect(migrate.status == 0)
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let queue = try DatabaseQueue(path: path)
                try await queue.write { try $0.execute(sql: "INSERT INTO subscriptions (user_id, latest_receipt) VALUES ('ユーザー 1', 'R1')") }
                try queue.close()
                await server.script("R1", [.json(AppleJSON.valid(
                    transactions: [AppleJSON.Transaction(originalTransactionID: "o1", expiresMs: AppleJSON.t0 + 60 * AppleJSON.day)],
                    renewals: [AppleJSON.Renewal(originalTransactionID: "o1")]))])
                let arguments = ["run", "--database", path, "--bundle-id", AppleJSON.bundleID, "--production-url", production, "--sandbox-url", sandbox,
                     "--now", "2026-01-29T00:00:00Z", "--report", "json"]
                let outcome = try await StatusPollerProcess.launch(arguments, environment: secret).outcome()
                #expect(outcome.status == 0, "\(outcome.stderr)")
                #expect(outcome.stdout.contains(#""verified" : 1"#))
                let check = try DatabaseQueue(path: path)
                let otid = try await check.read { try String.fetchOne($0, sql: "SELECT original_transaction_id FROM subscriptions WHERE user_id = 'ユーザー 1'") }
                #expect(otid == "o1")
                try check.close()
                #expect(FileManager.default.fileExists(atPath: path + ".lock"))
            }
        }
    }

    @Test func aFullDiskEndsTheRunAndDamagesNothing() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                var ids: [Int64] = []
                for i in 0..<300 {
                    ids.append(try db.insert(userID: "u\(i)", receipt: "R\(i)"))
                    await server.script("R\(i)", [.json(AppleJSON.valid(
                        latestReceipt: "NEW-\(i)-" + String(repeating: "x", count: 2000),
                        transactions: [AppleJSON.Transaction(originalTransactionID: "o\(i)", expiresMs: AppleJSON.t0 + 60 * AppleJSON.day)],
                        renewals: [AppleJSON.Renewal(originalTransactionID: "o\(i)")]))])
                }
                let before = try ids.map { try db.contractColumns($0) }
                // The disk is full: the store's writer may not grow the file by a single page.
                try await db.store.pool.write { d in
                    let pages = try Int.fetchOne(d, sql: "PRAGMA page_count") ?? 0
                    try d.execute(sql: "PRAGMA max_page_count = \(pages)")
                }
                var logger = Logger(label: "test")
                logger.logLevel = .critical
                let configuration = VerifyReceiptTesting.configuration(production, sandbox, attempts: 1, timeout: .seconds(60))
                let report = try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http, jitter: { 0.5 }) { client in
                    await PollRun(
                        configuration: .init(bundleID: AppleJSON.bundleID, nowMs: AppleJSON.t0 + 29 * AppleJSON.day, concurrency: 4, batchSize: 20, stopGrace: .milliseconds(200)),
                        store: db.store, source: client, logger: logger
                    ).run()
                }
                #expect(report.exitCode == .aborted)
                #expect(report.aborted?.hasPrefix("the database at \(db.path) can no longer be written: database or disk is full (disk full? permissions changed?).") == true, "\(report.aborted ?? "nil")")
                #expect(report.verified == 0)
                #expect(report.failedByReason.keys.sorted() == [.storeError])
                // The run stopped: far fewer rows were asked than selected.
                #expect(await server.received.count < 300)
                #expect(try ids.map { try db.contractColumns($0) } == before)
                #expect(try await db.webService.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
                #expect(try await db.webService.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM subscription_events") } == 0)
            }
        }
    }
}
