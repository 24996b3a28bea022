import Foundation
import GRDB
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Operations through the real binary: the overlap lock between processes, takeover after
/// SIGKILL, graceful stop, backfill resume, the audit trail, run history, metrics, JSON logs.
@Suite struct OperationsTests {
    typealias T = AppleJSON.Transaction
    let secret = ["APPSTORE_SHARED_SECRET": "s3cr3t"]

    func valid(_ otid: String, expires: Int64 = AppleJSON.t0 + 60 * AppleJSON.day) -> String {
        // No new latest_receipt: a row verified twice (after a kill) replays the same receipt.
        AppleJSON.valid(latestReceipt: nil, transactions: [T(originalTransactionID: otid, expiresMs: expires)], renewals: [AppleJSON.Renewal(originalTransactionID: otid)])
    }

    /// A request timeout that never fires: on a machine busy with the whole suite a loopback answer
    /// can take many seconds, and a retry would make a receipt look verified twice.
    func common(_ db: TemporaryDatabase, _ production: String, _ sandbox: String) -> [String] {
        ["--database", db.path, "--bundle-id", AppleJSON.bundleID, "--production-url", production, "--sandbox-url", sandbox, "--now", "2026-01-29T00:00:00Z"]
            + VerifyReceiptTesting.requestTimeoutOption
    }

    /// Every receipt is answered, except the first request for R10 and R11. A backfill at
    /// concurrency 2 thus stalls with exactly ten rows written and those two requests in flight, for
    /// as long as the test likes, however fast the machine; the next backfill gets every answer.
    func scriptStalledBackfill(_ server: ScriptedAppStore) async {
        for i in 0..<40 { await server.script("R\(i)", (10..<12).contains(i) ? [.never, .json(valid("o\(i)"))] : [.json(valid("o\(i)"))]) }
    }

    /// Returns once the backfill stalled as `scriptStalledBackfill` makes it: ten rows checkpointed,
    /// the two requests after them sent.
    func stalled(_ db: TemporaryDatabase, _ server: ScriptedAppStore) async throws -> Bool {
        guard try await eventually({ (try pollRun(db)?["checkpoint_id"] as Int64?) ?? 0 >= 10 }) else { return false }
        return try await eventually { await server.received.count >= 12 }
    }

    func pollRun(_ db: TemporaryDatabase) throws -> Row? {
        try db.webService.read { d in try Row.fetchOne(d, sql: "SELECT * FROM poll_runs ORDER BY id DESC LIMIT 1") }
    }

    @Test func overlapLockNamesTheHolderAndDiesWithIt() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for i in 0..<3 {
                    try db.insert(userID: "u\(i)", receipt: "R\(i)")
                    // The first run's requests are never answered: it still holds the lock when the
                    // second starts and when it is killed, however slow the machine.
                    await server.script("R\(i)", [.never, .json(valid("o\(i)"))])
                }
                let first = try await StatusPollerProcess.launch(["run"] + common(db, production, sandbox), environment: secret)
                let lockPath = db.path + ".lock"
                let held = try await eventually {
                    guard let data = FileManager.default.contents(atPath: lockPath) else { return false }
                    return (try? JSONDecoder().decode(RunLock.Holder.self, from: data))?.pid == first.pid
                }
                #expect(held)
                let second = try await StatusPollerProcess.launch(["run"] + common(db, production, sandbox), environment: secret).outcome()
                #expect(second.status == 75)
                #expect(second.stderr.contains("another run holds the lock \(lockPath): status-poller nightly pid \(first.pid) on "))
                #expect(second.stderr.contains("started 20"))
                #expect(second.stdout.isEmpty)

                first.signal(SIGKILL)
                _ = try await first.outcome()
                // The kernel released the lock with the process: no timeout, no manual cleanup.
                let third = try await StatusPollerProcess.launch(["run"] + common(db, production, sandbox) + ["--report", "json"], environment: secret).outcome()
                #expect(third.status == 0)
                let report = try #require(try JSONSerialization.jsonObject(with: Data(third.stdout.utf8)) as? [String: Any])
                #expect(report["verified"] as? Int == 3)
                let statuses = try await db.webService.read { d in try String.fetchAll(d, sql: "SELECT status FROM poll_runs ORDER BY id") }
                #expect(statuses == ["running", "finished"])
            }
        }
    }

    @Test func sigtermStopsGracefullyAndABackfillResumesWithoutRepeating() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for i in 0..<40 {
                    try db.insert(userID: "u\(i)", receipt: "R\(i)", SubscriptionState(originalTransactionID: "o\(i)", productID: "premium.monthly", expiresAt: AppleJSON.t0 + 200 * AppleJSON.day))
                }
                // Stopped mid-backfill on any machine: ten rows done, two requests that never end in flight.
                await scriptStalledBackfill(server)
                let args = ["backfill", "--all", "--concurrency", "2", "--report", "json"] + common(db, production, sandbox)
                let first = try await StatusPollerProcess.launch(args, environment: secret)
                #expect(try await stalled(db, server))
                first.signal(SIGTERM)
                let stopped = try await first.outcome()
                #expect(stopped.status == 4)
                let stoppedReport = try #require(try JSONSerialization.jsonObject(with: Data(stopped.stdout.utf8)) as? [String: Any])
                #expect(stoppedReport["interrupted"] as? Bool == true)
                let run = try #require(try pollRun(db))
                #expect(run["status"] == "interrupted")
                #expect(run["exit_code"] == 4)
                // The two requests in flight had the stop's grace (3 s), got no answer, and were
                // abandoned: everything answered is checkpointed, nothing after it.
                #expect(stoppedReport["abandoned"] as? Int == 2)
                let checkpoint: Int64 = run["checkpoint_id"]
                #expect(checkpoint == 10)
                #expect(await server.received.count == 12)

                let resumed = try await StatusPollerProcess.launch(["backfill", "--resume", "--concurrency", "2", "--report", "json"] + common(db, production, sandbox), environment: secret).outcome()
                #expect(resumed.status == 0)
                let report = try #require(try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: Any])
                #expect(report["selected"] as? Int == 40 - Int(checkpoint))
                // Every receipt up to the checkpoint was verified exactly once over the two processes;
                // only the two abandoned ones were asked again.
                let perReceipt = Dictionary(grouping: await server.received.compactMap(\.receipt), by: { $0 }).mapValues(\.count)
                #expect(perReceipt == Dictionary(uniqueKeysWithValues: (0..<40).map { ("R\($0)", $0 == 10 || $0 == 11 ? 2 : 1) }))
                #expect(try pollRun(db)?["status"] == "finished")
                #expect(try await db.webService.read { d in try Int.fetchOne(d, sql: "SELECT count(*) FROM poll_runs") } == 1)
            }
        }
    }

    @Test func backfillResumesAfterSIGKILLFromItsCheckpoint() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for i in 0..<40 { try db.insert(userID: "u\(i)", receipt: "R\(i)") }
                // Killed mid-backfill on any machine: ten rows done, two requests that never end in flight.
                await scriptStalledBackfill(server)
                let first = try await StatusPollerProcess.launch(["backfill", "--all", "--concurrency", "2"] + common(db, production, sandbox), environment: secret)
                #expect(try await stalled(db, server))
                first.signal(SIGKILL)
                _ = try await first.outcome()
                let checkpoint: Int64 = try #require(try pollRun(db))["checkpoint_id"]
                #expect(checkpoint == 10)
                let resumed = try await StatusPollerProcess.launch(["backfill", "--resume", "--concurrency", "2", "--report", "json"] + common(db, production, sandbox), environment: secret).outcome()
                #expect(resumed.status == 0)
                let report = try #require(try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: Any])
                #expect(report["selected"] as? Int == 40 - Int(checkpoint))
                // Rows up to the checkpoint were not verified again; the two killed in flight were.
                for i in 0..<40 { #expect(await server.requests(for: "R\(i)").count == (i == 10 || i == 11 ? 2 : 1), "R\(i)") }
                let unverified = try await db.webService.read { d in try Int.fetchOne(d, sql: "SELECT count(*) FROM subscriptions WHERE last_verified_at IS NULL") }
                #expect(unverified == 0)
            }
        }
    }

    @Test func backfillChoosesRowsIgnoringTheNightlyWindows() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let far = SubscriptionState(originalTransactionID: "o1", productID: "premium.monthly", expiresAt: AppleJSON.t0 + 300 * AppleJSON.day)
                try db.insert(userID: "alice", receipt: "RA", far)
                try db.insert(userID: "bob", receipt: "RB", SubscriptionState(originalTransactionID: "o2", productID: "premium.monthly", expiresAt: AppleJSON.t0 + 300 * AppleJSON.day))
                try db.insert(userID: "carol", receipt: "RC", SubscriptionState(originalTransactionID: "o3", productID: "premium.monthly", expiresAt: AppleJSON.t0 - 100 * AppleJSON.day))
                await server.script("RA", [.json(valid("o1", expires: AppleJSON.t0 + 300 * AppleJSON.day))])
                await server.script("RB", [.json(valid("o2", expires: AppleJSON.t0 + 300 * AppleJSON.day))])
                await server.script("RC", [.json(valid("o3", expires: AppleJSON.t0 - 100 * AppleJSON.day))])
                let nightly = try await StatusPollerProcess.launch(["run", "--report", "json"] + common(db, production, sandbox), environment: secret).outcome()
                #expect(nightly.stdout.contains(#""selected" : 0"#))
                let usersFile = db.directory.appendingPathComponent("users.txt")
                try Data("# support ticket 123\nalice\n\ncarol\n".utf8).write(to: usersFile)
                let byFile = try await StatusPollerProcess.launch(["backfill", "--users-file", usersFile.path, "--max-rate", "50", "--report", "json"] + common(db, production, sandbox), environment: secret).outcome()
                #expect(byFile.status == 0)
                #expect(byFile.stdout.contains(#""selected" : 2"#))
                #expect(await server.received.compactMap(\.receipt).sorted() == ["RA", "RC"])
                let byUser = try await StatusPollerProcess.launch(["backfill", "--user-id", "bob"] + common(db, production, sandbox), environment: secret).outcome()
                #expect(byUser.status == 0)
                let since = try await StatusPollerProcess.launch(["backfill", "--expired-since", "2026-01-01", "--report", "json"] + common(db, production, sandbox), environment: secret).outcome()
                #expect(since.stdout.contains(#""selected" : 2"#))
                let nothing = try await StatusPollerProcess.launch(["backfill", "--resume"] + common(db, production, sandbox), environment: secret).outcome()
                #expect(nothing.status == 2)
                #expect(nothing.stderr.contains("no interrupted backfill to resume"))
                let twoChoices = try await StatusPollerProcess.launch(["backfill", "--all", "--user-id", "x"] + common(db, production, sandbox), environment: secret).outcome()
                #expect(twoChoices.status == 2)
                #expect(twoChoices.stderr.contains("exactly one of --all, --user-id, --users-file, --expired-since"))
            }
        }
    }

    @Test func auditTrailRunsMetricsAndJSONLogs() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                try db.insert(userID: "alice", receipt: "RA")
                try db.insert(userID: "mallory", receipt: "RM")
                let firstPeriod = T(originalTransactionID: "oA", transactionID: "tA1", expiresMs: AppleJSON.t0 + 30 * AppleJSON.day)
                let renewal = T(originalTransactionID: "oA", transactionID: "tA2", purchaseMs: AppleJSON.t0 + 30 * AppleJSON.day, expiresMs: AppleJSON.t0 + 60 * AppleJSON.day)
                // Night 2 replays the receipt Apple handed out on night 1.
                await server.script("RA", [.json(AppleJSON.valid(latestReceipt: "RA-2", transactions: [firstPeriod], renewals: [AppleJSON.Renewal(originalTransactionID: "oA")]))])
                await server.script("RA-2", [.json(AppleJSON.valid(latestReceipt: "RA-3", transactions: [firstPeriod, renewal], renewals: [AppleJSON.Renewal(originalTransactionID: "oA")]))])
                await server.script("RM", [.json(AppleJSON.valid(transactions: [firstPeriod], renewals: []))])
                let metrics = db.directory.appendingPathComponent("status_poller.prom").path
                let night1 = try await StatusPollerProcess.launch(
                    ["run", "--concurrency", "1", "--log-format", "json", "--metrics-file", metrics] + common(db, production, sandbox), environment: secret).outcome()
                #expect(night1.status == 1)  // mallory's replay is a conflict
                let night2 = try await StatusPollerProcess.launch(
                    ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--production-url", production, "--sandbox-url", sandbox,
                     "--now", "2026-01-30T12:00:00Z", "--metrics-file", metrics], environment: secret).outcome()
                #expect(night2.status == 1)

                // JSON logs: one object per line, each with the run id.
                let lines = night1.stderr.split(separator: "\n").filter { !$0.isEmpty }
                #expect(!lines.isEmpty)
                for line in lines {
                    let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    #expect(object?["run.id"] as? String == "1", "\(line)")
                    #expect(object?["level"] != nil && object?["message"] != nil)
                }

                // The audit trail, newest first, with reasons, run ids and Apple's status.
                let history = try await StatusPollerProcess.launch(["history", "--database", db.path, "--user-id", "alice"]).outcome()
                #expect(history.status == 0)
                let entries = history.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }
                #expect(entries.count == 2, "\(history.stdout) // night2: \(night2.stdout) \(night2.stderr)")
                try #require(entries.count == 2)
                #expect(entries[0].contains("renewed") && entries[0].contains("run 2") && entries[0].contains("Apple status verifyReceipt 0"))
                #expect(entries[1].contains("first_verified") && entries[1].contains("unverified → active") && entries[1].contains("run 1"))
                #expect(history.stdout.contains("expires_at: 2026-01-31 00:00:00 → 2026-03-02 00:00:00"))
                let conflict = try await StatusPollerProcess.launch(["history", "--database", db.path, "--user-id", "mallory", "--format", "json"]).outcome()
                let events = try #require(try JSONSerialization.jsonObject(with: Data(conflict.stdout.utf8)) as? [[String: Any]])
                #expect(events.map { $0["reason"] as? String } == ["conflict", "conflict"])
                #expect(events.first?["entitlement_after"] as? String == "unverified")
                #expect(events.first?["status_backend"] as? String == "verifyReceipt")

                // Run history.
                let runs = try await StatusPollerProcess.launch(["runs", "--database", db.path, "--format", "json"]).outcome()
                let recorded = try #require(try JSONSerialization.jsonObject(with: Data(runs.stdout.utf8)) as? [[String: Any]])
                #expect(recorded.map { $0["id"] as? Int } == [2, 1])
                #expect(recorded.map { $0["status"] as? String } == ["finished", "finished"])
                #expect((recorded[1]["report"] as? [String: Any])?["verified"] as? Int == 1)
                #expect((recorded[1]["options"] as? [String: String])?["concurrency"] == "1")
                #expect(!runs.stdout.contains("s3cr3t"))
                let text = try await StatusPollerProcess.launch(["runs", "--database", db.path, "--last", "1"]).outcome()
                #expect(text.stdout.split(separator: "\n").count == 2)

                // Metrics, Prometheus text format, from the last run.
                let prom = try String(contentsOfFile: metrics, encoding: .utf8)
                #expect(prom.contains("# TYPE status_poller_run_subscriptions gauge"))
                #expect(prom.contains(#"status_poller_run_subscriptions{mode="nightly",outcome="verified"} 1"#))
                #expect(prom.contains(#"status_poller_run_failures{mode="nightly",reason="conflict"} 1"#))
                #expect(prom.contains(#"status_poller_run_exit_code{mode="nightly"} 1"#))
                #expect(prom.contains(#"status_poller_run_transitions{mode="nightly",transition="renewed"} 1"#))
                #expect(!prom.contains("status_poller_last_success_timestamp_seconds"))
            }
        }
    }

    /// The outbox is written only when something reads it: a run without an endpoint or
    /// `event_outbox` writes its changes and their audit rows but no event; `event_outbox` (here
    /// from the environment) or an endpoint in the config file (its secret not even read) turn it on.
    @Test func theRunWritesTheOutboxOnlyForAReader() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let config = db.directory.appendingPathComponent("config.json").path
                try Data(#"{"event_endpoints": {"web": {"url": "https://hooks.example.com/", "secret_file": "/nonexistent"}}}"#.utf8)
                    .write(to: URL(fileURLWithPath: config))
                let nights: [(user: String, options: [String], environment: [String: String])] = [
                    ("a", [], [:]), ("b", [], ["STATUS_POLLER_EVENT_OUTBOX": "true"]), ("c", ["--config", config], [:]),
                ]
                var counts: [String] = []
                for night in nights {
                    try db.insert(userID: night.user, receipt: "R\(night.user)")
                    await server.script("R\(night.user)", [.json(valid("o\(night.user)"))])
                    let run = try await StatusPollerProcess.launch(
                        ["run"] + common(db, production, sandbox) + night.options, environment: secret.merging(night.environment) { $1 }).outcome()
                    #expect(run.status == 0, "\(run.stderr)")
                    counts.append(try await db.webService.read { d in try String.fetchOne(d, sql: "SELECT group_concat(user_id) FROM outbound_events") } ?? "")
                }
                #expect(counts == ["", "b", "b,c"])
                let trail = try await db.webService.read { d in try String.fetchAll(d, sql: "SELECT user_id || ':' || reason FROM subscription_events ORDER BY id") }
                #expect(trail == ["a:first_verified", "b:first_verified", "c:first_verified"])
            }
        }
    }

    /// `prune` as an operator runs it (settings checked, the archive written, what it deleted
    /// printed), the nightly run pruning after it polls when a setting is given, and the report
    /// saying from when its trail starts.
    @Test func pruneFromTheCommandLineAndAfterANightlyRun() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let now = ISO8601DateFormatter().date(from: "2026-01-29T00:00:00Z")!.timeIntervalSince1970 * 1000
                let old = Int64(now) - 40 * AppleJSON.day
                let id = try db.insert(userID: "a", receipt: "Ra")
                func oldAuditRow() throws {
                    try db.webService.write { d in
                        try d.execute(sql: """
                            INSERT INTO subscription_events (subscription_id, user_id, at, reason, entitlement_before, entitlement_after, old_values, new_values)
                            VALUES (?, 'a', ?, 'renewed', 'active', 'active', '{}', '{}')
                            """, arguments: [id, old])
                    }
                }
                try oldAuditRow()
                let nothing = try await StatusPollerProcess.launch(["prune", "--database", db.path]).outcome()
                #expect(nothing.status == 2)
                #expect(nothing.stderr.contains("nothing to prune: give --audit-keep-days"))
                let tooShort = try await StatusPollerProcess.launch(["prune", "--database", db.path, "--audit-keep-days", "3"]).outcome()
                #expect(tooShort.status == 2)
                #expect(tooShort.stderr.contains("audit_keep_days must be a whole number of days, at least 7"))

                let archive = db.directory.appendingPathComponent("archive").path
                try FileManager.default.createDirectory(atPath: archive, withIntermediateDirectories: true)
                let pruned = try await StatusPollerProcess.launch(
                    ["prune", "--database", db.path, "--audit-keep-days", "30", "--archive-dir", archive, "--now", "2026-01-29T00:00:00Z"]).outcome()
                #expect(pruned.status == 0, "\(pruned.stderr)")
                let file = "\(archive)/subscription_events-20260129T000000Z.jsonl.gz"
                #expect(pruned.stdout == "subscription_events: 1 deleted (archived in \(file))\nrenewal_extensions: 0 deleted\n")
                #expect(try RetentionTests.gunzip(file).count == 1)

                // The nightly run prunes after it polls, with the setting from the environment.
                try oldAuditRow()
                await server.script("Ra", [.json(valid("oa"))])
                let run = try await StatusPollerProcess.launch(
                    ["run", "--report", "json"] + common(db, production, sandbox), environment: secret.merging(["STATUS_POLLER_AUDIT_KEEP_DAYS": "30"]) { $1 }).outcome()
                #expect(run.status == 0, "\(run.stderr)")
                let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
                #expect(report?["pruned"] as? [String: Int] == ["subscription_events": 1, "renewal_extensions": 0])
                let reasons = try await db.webService.read { d in try String.fetchAll(d, sql: "SELECT reason FROM subscription_events") }
                #expect(reasons == ["first_verified"])

                // The report says where the trail now starts.
                let trail = try await StatusPollerProcess.launch(["report", "--database", db.path, "--format", "json", "--environment", "all", "--output", "-"]).outcome()
                #expect(trail.status == 0, "\(trail.stderr)")
                let object = try JSONSerialization.jsonObject(with: Data(trail.stdout.utf8)) as? [String: Any]
                #expect((object?["trail_starts_at"] as? String)?.hasPrefix("2026-") == true, "\(trail.stdout.prefix(300))")
            }
        }
    }

    @Test func enrollThenShow() async throws {
        try await withTemporaryDatabase { db in
            let receiptFile = db.directory.appendingPathComponent("receipt.b64")
            try Data("TUlJVDVRWUpLb1pJaHZjTkFRY0Nv\n".utf8).write(to: receiptFile)
            let enrolled = try await StatusPollerProcess.launch(["enroll", "--database", db.path, "--user-id", "u-77", "--receipt-file", receiptFile.path]).outcome()
            #expect(enrolled.status == 0)
            #expect(enrolled.stdout == "enrolled user u-77 as subscription 1; the next run verifies it\n")
            let shown = try await StatusPollerProcess.launch(["show", "--database", db.path, "--user-id", "u-77"]).outcome()
            #expect(shown.status == 0)
            #expect(shown.stdout.contains("subscription 1  user u-77  →  unverified, not entitled"))
            #expect(!shown.stdout.contains("TUlJVDVR"))
            try Data("not base64 at all!".utf8).write(to: receiptFile)
            let bad = try await StatusPollerProcess.launch(["enroll", "--database", db.path, "--user-id", "u-78", "--receipt-file", receiptFile.path]).outcome()
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("the receipt must be the app receipt in base64"))
            let nobody = try await StatusPollerProcess.launch(["show", "--database", db.path, "--user-id", "nobody"]).outcome()
            #expect(nobody.status == 1)
        }
    }
}

/// Settings: an option beats an environment variable, which beats the config file, which beats the
/// default.
@Suite struct ConfigurationPrecedenceTests {
    @Test func optionThenEnvironmentThenFileThenDefault() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                try db.insert(userID: "u", receipt: "R")
                await server.script("R", [.json(AppleJSON.valid(latestReceipt: nil, transactions: [AppleJSON.Transaction()], renewals: []))])
                let config = db.directory.appendingPathComponent("status-poller.json")
                let file: [String: Any] = [
                    "database": db.path, "bundle_id": AppleJSON.bundleID, "production_url": production, "sandbox_url": sandbox,
                    "concurrency": 3, "max_attempts": "2", "report": "json",
                ]
                try JSONSerialization.data(withJSONObject: file).write(to: config)
                let secret = ["APPSTORE_SHARED_SECRET": "s3cr3t"]
                func recordedConcurrency(_ arguments: [String], _ environment: [String: String]) async throws -> String? {
                    let outcome = try await StatusPollerProcess.launch(["run", "--config", config.path, "--now", "2026-01-29T00:00:00Z"] + arguments, environment: secret.merging(environment) { $1 }).outcome()
                    #expect(outcome.status == 0, "\(outcome.stderr)")
                    #expect(outcome.stdout.hasPrefix("{"), "report from the file's report setting")
                    let runs = try await StatusPollerProcess.launch(["runs", "--config", config.path, "--last", "1", "--format", "json"]).outcome()
                    let latest = (try JSONSerialization.jsonObject(with: Data(runs.stdout.utf8)) as? [[String: Any]])?.first
                    let options = latest?["options"] as? [String: String]
                    #expect(options?["max_attempts"] == "2")
                    return options?["concurrency"]
                }
                #expect(try await recordedConcurrency([], [:]) == "3")
                #expect(try await recordedConcurrency([], ["STATUS_POLLER_CONCURRENCY": "2"]) == "2")
                #expect(try await recordedConcurrency(["--concurrency", "1"], ["STATUS_POLLER_CONCURRENCY": "2"]) == "1")
                // The config file can also come from the environment.
                let viaEnvironment = try await StatusPollerProcess.launch(["runs", "--last", "1"], environment: ["STATUS_POLLER_CONFIG": config.path]).outcome()
                #expect(viaEnvironment.status == 0)

                let bad = try await StatusPollerProcess.launch(["run", "--config", config.path], environment: secret.merging(["STATUS_POLLER_CONCURRENCY": "lots"]) { $1 }).outcome()
                #expect(bad.status == 2)
                #expect(bad.stderr.contains("concurrency must be a whole number, got 'lots'."))
                let missing = try await StatusPollerProcess.launch(["run", "--config", db.directory.appendingPathComponent("nope.json").path], environment: secret).outcome()
                #expect(missing.status == 2)
                #expect(missing.stderr.contains("cannot read the config file"))
                let noDatabase = try await StatusPollerProcess.launch(["run", "--bundle-id", "x"], environment: secret).outcome()
                #expect(noDatabase.status == 2)
                #expect(noDatabase.stderr.contains("--database is required (or database in the config file, or STATUS_POLLER_DATABASE)."))
            }
        }
    }
}
