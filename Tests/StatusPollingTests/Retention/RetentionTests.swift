import CZlib
import Foundation
import Logging
import Testing

@testable import EntitlementCore
@testable import StatusPolling

/// Retention on every store: what is older than its setting goes, a bounded batch at a time, what
/// is pending stays whatever its age, a run goes only once no audit row names it, and with an
/// archive folder every deleted row is in a gzip JSON lines file first.
@Suite struct RetentionTests {
    let day: Int64 = 86_400_000
    let now: Int64 = 1_800_000_000_000

    /// The lines of a gzip file.
    static func gunzip(_ path: String) throws -> [String] {
        guard let file = gzopen(path, "rb") else { throw CocoaError(.fileReadNoSuchFile) }
        defer { gzclose(file) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = gzread(file, &buffer, UInt32(buffer.count))
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<Int(count)])
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// A row, and history of every table: each kind once old (40 days) and once recent (1 day),
    /// plus the pending refund request and extension, old, that must stay.
    func arrange(_ db: StoreUnderTest) async throws -> (oldRun: Int64, newRun: Int64) {
        let id = try await db.insert(userID: "u1", receipt: "R1")
        let oldRun = try await db.store.startRun(RunStart(mode: .nightly, nowMs: now - 40 * day, startedAtMs: now - 40 * day, host: "h", pid: 1, options: [:]))
        try await db.store.finishRun(oldRun, report: RunReport(nowMs: now - 40 * day, dryRun: false), status: .finished, checkpoint: nil)
        let lonelyRun = try await db.store.startRun(RunStart(mode: .nightly, nowMs: now - 39 * day, startedAtMs: now - 39 * day, host: "h", pid: 1, options: [:]))
        try await db.store.finishRun(lonelyRun, report: RunReport(nowMs: now - 39 * day, dryRun: false), status: .finished, checkpoint: nil)
        let oldBackfill = try await db.store.startRun(RunStart(mode: .backfill, nowMs: now - 38 * day, startedAtMs: now - 38 * day, host: "h", pid: 1, options: [:]))
        let newRun = try await db.store.startRun(RunStart(mode: .nightly, nowMs: now - day, startedAtMs: now - day, host: "h", pid: 1, options: [:]))
        try await db.store.finishRun(newRun, report: RunReport(nowMs: now - day, dryRun: false), status: .finished, checkpoint: nil)
        _ = oldBackfill  // still running: kept
        for (n, at, run) in [(1, now - 40 * day, oldRun), (2, now - 35 * day, Optional<Int64>.none), (3, now - 31 * day, oldRun), (4, now - day, newRun)] {
            try await db.execute("""
                INSERT INTO subscription_events (subscription_id, user_id, at, reason, entitlement_before, entitlement_after, old_values, new_values, run_id)
                VALUES (\(id), 'u1', \(at), 'renewed', 'active', 'active', '{"n":\(n)}', '{"n":\(n)}', \(run.map(String.init) ?? "NULL"))
                """)
        }
        for (uuid, at) in [("n-old", now - 40 * day), ("n-new", now - day)] {
            try await db.execute("""
                INSERT INTO app_store_notifications (notification_id, version, type, signed_at, apple_state_at, environment, source, received_at, outcome, subscription_id)
                VALUES ('\(uuid)', 2, 'DID_RENEW', \(at), \(at), 'Production', 'push', \(at), 'applied', \(id))
                """)
        }
        for (uuid, state) in [("c-sent", "sent"), ("c-pending", "pending")] {
            try await db.execute("""
                INSERT INTO consumption_requests (notification_id, transaction_id, subscription_id, user_id, requested_at, deadline_at, delivery_status, prior_refunds, state, next_attempt_at)
                VALUES ('\(uuid)', 't1', \(id), 'u1', \(now - 40 * day), \(now - 40 * day + 43_200_000), 'DELIVERED', 0, '\(state)', \(now - 40 * day))
                """)
        }
        for (request, accepted, error, completed) in [("x-done", "1", "NULL", "1"), ("x-refused", "NULL", "4000023", "NULL"), ("x-pending", "1", "NULL", "NULL")] {
            try await db.execute("""
                INSERT INTO renewal_extensions (request_identifier, product_id, extend_by_days, reason_code, environment, requested_at, accepted_at, apple_error, completed_at)
                VALUES ('\(request)', 'premium.monthly', 7, 1, 'Production', \(now - 40 * day), \(accepted), \(error), \(completed))
                """)
        }
        return (oldRun, newRun)
    }

    @Test(arguments: StoreKind.available) func oldHistoryGoesArchivedAndPendingWorkStays(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let (oldRun, newRun) = try await arrange(db)
            let archive = FileManager.default.temporaryDirectory.appendingPathComponent("prune-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: archive, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: archive) }
            let policy = RetentionPolicy(keepDays: [.audit: 30, .notifications: 30, .runs: 30], archiveDirectory: archive, batchSize: 2)
            let report = try await Pruner(store: db.store, policy: policy, logger: Logger(label: "test")).prune(nowMs: now)

            #expect(report.deleted == [.subscriptionEvents: 3, .renewalExtensions: 2, .appStoreNotifications: 1, .consumptionRequests: 1, .pollRuns: 2])
            #expect(try await db.rows("SELECT new_values FROM subscription_events ORDER BY id").map { $0["new_values"] } == [#"{"n":4}"#])
            #expect(try await db.rows("SELECT notification_id FROM app_store_notifications").map { $0["notification_id"] } == ["n-new"])
            #expect(try await db.rows("SELECT notification_id FROM consumption_requests").map { $0["notification_id"] } == ["c-pending"])
            #expect(try await db.rows("SELECT request_identifier FROM renewal_extensions").map { $0["request_identifier"] } == ["x-pending"])
            // The old run went once its audit rows had; the running backfill and the newest nightly stay.
            let runs = try await db.rows("SELECT id, mode FROM poll_runs ORDER BY id").map { "\($0["mode"] ?? "")" }
            #expect(runs == ["backfill", "nightly"])
            #expect(try await db.row("SELECT count(*) AS n FROM poll_runs WHERE id = \(newRun)")?["n"] == "1")
            #expect(try await db.row("SELECT count(*) AS n FROM poll_runs WHERE id = \(oldRun)")?["n"] == "0")

            // Every deleted row is in its table's file, as JSON with every column.
            let events = try Self.gunzip(try #require(report.archives[.subscriptionEvents]))
            #expect(events.count == 3)
            let first = try JSONSerialization.jsonObject(with: Data(events[0].utf8)) as? [String: Any]
            #expect(first?["new_values"] as? String == #"{"n":1}"#)
            #expect("\(first?["run_id"] ?? "")" == "\(oldRun)")
            #expect("\(first?["at"] ?? "")" == "\(now - 40 * day)")
            #expect(try Self.gunzip(try #require(report.archives[.pollRuns])).count == 2)
            #expect(try Self.gunzip(try #require(report.archives[.consumptionRequests])).map { $0.contains("c-sent") } == [true])
            #expect(report.archives[.appStoreNotifications].map { URL(fileURLWithPath: $0).lastPathComponent } == "app_store_notifications-20270115T080000Z.jsonl.gz")

            // Again: nothing is old enough, and no empty file is made.
            let again = try await Pruner(store: db.store, policy: policy, logger: Logger(label: "test")).prune(nowMs: now + 1_000)
            #expect(again.total == 0 && again.archives.isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: archive).count == 5)
        }
    }

    /// Only the tables of the settings given are touched; without an archive nothing is written.
    @Test(arguments: StoreKind.available) func aSettingLeftOutKeepsItsHistory(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            _ = try await arrange(db)
            let report = try await Pruner(store: db.store, policy: RetentionPolicy(keepDays: [.notifications: 7]), logger: Logger(label: "test")).prune(nowMs: now)
            #expect(report.deleted == [.appStoreNotifications: 1, .consumptionRequests: 1])
            #expect(report.archives.isEmpty)
            #expect(try await db.row("SELECT count(*) AS n FROM subscription_events")?["n"] == "4")
            #expect(try await db.row("SELECT count(*) AS n FROM poll_runs")?["n"] == "4")
        }
    }

    /// An archive that cannot be written deletes nothing.
    @Test func anArchiveThatCannotBeWrittenDeletesNothing() async throws {
        try await withStore(.sqlite) { db in
            _ = try await arrange(db)
            let missing = "/nonexistent/prune-archive"
            let policy = RetentionPolicy(keepDays: [.audit: 30], archiveDirectory: missing)
            await #expect(throws: RetentionError.archive(
                "the archive folder \(missing) does not exist: create it (writable by the poller's user) or leave prune_archive_dir unset"
            )) {
                _ = try await Pruner(store: db.store, policy: policy, logger: Logger(label: "test")).prune(nowMs: now)
            }
            #expect(try await db.row("SELECT count(*) AS n FROM subscription_events")?["n"] == "4")
        }
    }
}
