import EntitlementCore
import Foundation
import Testing
import StatusPolling

/// The `status-poller` binary as cron runs it: exit codes, one report on stdout, logs on stderr,
/// the secret from the environment or a file.
@Suite struct CommandLineTests {
    func statusPoller(_ arguments: [String], environment: [String: String] = [:]) async throws -> StatusPollerProcess.Outcome {
        try await StatusPollerProcess.launch(arguments, environment: environment).outcome()
    }

    @Test func helpDocumentsTheExitCodes() async throws {
        let help = try await statusPoller(["run", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("APPSTORE_SHARED_SECRET"))
        #expect(help.stdout.contains("Exit codes:\n  0  every selected subscription was verified"))
        let root = try await statusPoller(["--help"])
        #expect(root.stdout.contains("3  run aborted"))
    }

    @Test func usageErrorsExitTwoWithWhatToDo() async throws {
        try await withTemporaryDatabase { db in
            let secret = ["APPSTORE_SHARED_SECRET": "s3cr3t"]
            let noSecret = try await statusPoller(["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID])
            #expect(noSecret.status == 2)
            #expect(noSecret.stderr.contains("no App Store shared secret. Set APPSTORE_SHARED_SECRET or pass --shared-secret-file PATH"))
            #expect(noSecret.stdout.isEmpty)

            let missing = try await statusPoller(["run", "--database", db.path + ".typo", "--bundle-id", "x"], environment: secret)
            #expect(missing.status == 2)
            #expect(missing.stderr.contains("Create it with `status-poller migrate --database \(db.path).typo`"))
            #expect(!FileManager.default.fileExists(atPath: db.path + ".typo"))

            let badFlag = try await statusPoller(["run", "--database", db.path, "--bundle-id", "x", "--concurrency", "0"], environment: secret)
            #expect(badFlag.status == 2)
            #expect(badFlag.stderr.contains("--concurrency must be between 1 and 512, got 0."))

            let badNow = try await statusPoller(["run", "--database", db.path, "--bundle-id", "x", "--now", "yesterday"], environment: secret)
            #expect(badNow.status == 2)
            #expect(badNow.stderr.contains("--now must be ISO 8601"))

            let unknown = try await statusPoller(["run", "--database", db.path, "--bundle-id", "x", "--shared-secret", "oops"], environment: secret)
            #expect(unknown.status == 2)

            let unreadableSecret = try await statusPoller(["run", "--database", db.path, "--bundle-id", "x", "--shared-secret-file", "/nonexistent/secret"])
            #expect(unreadableSecret.status == 2)
            #expect(unreadableSecret.stderr.contains("cannot read the shared secret file /nonexistent/secret"))
        }
    }

    /// `--now` as a date-time in UTC, with fractions, with an offset, or as a plain date (its
    /// midnight UTC): each is the run's clock to the millisecond (`RFC3339Timestamp`, not
    /// Foundation's ISO 8601 style, reads them).
    @Test(arguments: [
        ("2026-01-29T00:00:00Z", Int64(1_769_644_800_000)), ("2026-01-29T00:00:00.250Z", 1_769_644_800_250),
        ("2026-01-29T02:30:00+02:30", 1_769_644_800_000), ("2026-01-28T19:00:00-05:00", 1_769_644_800_000),
        ("2026-01-29", 1_769_644_800_000),
    ])
    func nowIsTheRunsClockInEachForm(now: String, ms: Int64) async throws {
        try await withTemporaryDatabase { db in
            let run = try await statusPoller(
                ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--now", now, "--report", "json"],
                environment: ["APPSTORE_SHARED_SECRET": "s3cr3t"])
            #expect(run.status == 0, "\(run.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(report["now_ms"] as? Int64 == ms)
        }
    }

    @Test(arguments: ["2026-01-29T00:00:00", "2026-02-30", "2026-01-29T24:00:00Z", "29/01/2026", "2026-01-29Z"])
    func nowThatIsNotADateIsRefused(now: String) async throws {
        try await withTemporaryDatabase { db in
            let run = try await statusPoller(
                ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--now", now], environment: ["APPSTORE_SHARED_SECRET": "s3cr3t"])
            #expect(run.status == 2)
            #expect(run.stderr.contains("--now must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(now)'."), "\(run.stderr)")
        }
    }

    @Test func plainHTTPOnlyToLoopbackAndTheBreakerAndDeadlineOptionsAreChecked() async throws {
        try await withTemporaryDatabase { db in
            let secret = ["APPSTORE_SHARED_SECRET": "s3cr3t"]
            let base = ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--sandbox-url", "http://127.0.0.1:9/verifyReceipt"]
            let remote = try await statusPoller(base + ["--production-url", "http://buy.itunes.apple.com/verifyReceipt"], environment: secret)
            #expect(remote.status == 2)
            #expect(remote.stderr.contains(
                "error: --production-url is http:// on buy.itunes.apple.com, which is not loopback: receipts and the shared secret would travel unencrypted. Use https://, or pass --allow-insecure-http"))
            // Nothing was asked and nothing was recorded.
            #expect(try await db.webService.read { d in try Int.fetchOne(d, sql: "SELECT count(*) FROM poll_runs") } == 0)

            for host in ["http://localhost:9/verifyReceipt", "http://[::1]:9/verifyReceipt", "http://127.0.0.2:9/verifyReceipt"] {
                let loopback = try await statusPoller(base + ["--production-url", host, "--report", "json"], environment: secret)
                #expect(loopback.status == 0, "\(host): \(loopback.stderr)")
            }
            let allowed = try await statusPoller(base + ["--production-url", "http://10.0.0.1:9/verifyReceipt", "--allow-insecure-http", "--report", "json"], environment: secret)
            #expect(allowed.status == 0, "\(allowed.stderr)")

            let local = base + ["--production-url", "http://127.0.0.1:9/verifyReceipt"]
            let bad: [([String], String)] = [
                (["--deadline", "soon"], "--deadline must be a duration such as 90s, 45m or 2h (at most 7 days), got 'soon'."),
                (["--deadline", "0s"], "--deadline must be a duration such as 90s, 45m or 2h (at most 7 days), got '0s'."),
                (["--circuit-breaker", "maybe"], "--circuit-breaker"),
                (["--circuit-breaker-window", "0"], "--circuit-breaker-window must be between 1 and 10000 subscriptions, got 0."),
                (["--circuit-breaker-threshold", "150"], "--circuit-breaker-threshold is a percentage above 0 and at most 100, got 150.0."),
                (["--overload-threshold", "0"], "--overload-threshold is a percentage above 0 and at most 100, got 0.0."),
                (["--overload-window", "20000"], "--overload-window must be between 1 and 10000 answers, got 20000."),
                (["--lapsed-within", "0"], "--lapsed-within must be between 1 and 3650 days, got 0."),
                (["--lapsed-every", "200"], "--lapsed-every must be between 0 (no sweep) and --lapsed-within (180) days, got 200."),
                (["--lapsed-every=-1"], "--lapsed-every must be between 0 (no sweep) and --lapsed-within (180) days, got -1."),
                (["--fresh-within", "soon"], "--fresh-within must be a duration such as 12h or 90m (at most 7 days), or 0 to ask every row, got 'soon'."),
            ]
            for (flags, message) in bad {
                let outcome = try await statusPoller(local + flags, environment: secret)
                #expect(outcome.status == 2, "\(flags)")
                #expect(outcome.stderr.contains(message), "\(flags): \(outcome.stderr)")
            }
            let good = try await statusPoller(
                local + ["--deadline", "90m", "--circuit-breaker", "off", "--overload-threshold", "35", "--overload-window", "50", "--lapsed-every", "0", "--fresh-within", "2h", "--report", "json"],
                environment: secret)
            #expect(good.status == 0, "\(good.stderr)")
            let options = try await db.webService.read { d in try String.fetchOne(d, sql: "SELECT options FROM poll_runs ORDER BY id DESC LIMIT 1") }
            #expect(options?.contains(#""deadline":"5400 s""#) == true, "\(options ?? "")")
            #expect(options?.contains(#""circuit_breaker":"off""#) == true)
            #expect(options?.contains(#""overload":"35.0 % of 50 answers""#) == true, "\(options ?? "")")
            #expect(options?.contains(#""lapsed_sweep":"off""#) == true, "\(options ?? "")")
            #expect(options?.contains(#""fresh_within_seconds":"7200""#) == true, "\(options ?? "")")
        }
    }

    @Test func aRunPrintsOneJSONReportAndMapsFailuresToExitOne() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let secretFile = db.directory.appendingPathComponent("secret").path
                try Data("file-secret\n".utf8).write(to: URL(fileURLWithPath: secretFile))
                try db.insert(userID: "ok", receipt: "R-ok")
                try db.insert(userID: "bad", receipt: "R-bad")
                await server.script("R-ok", [.json(AppleJSON.valid(transactions: [AppleJSON.Transaction()], renewals: []))])
                await server.script("R-bad", [.json(AppleJSON.status(21003))])
                let outcome = try await statusPoller([
                    "run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--now", "2026-01-29T00:00:00Z",
                    "--production-url", production, "--sandbox-url", sandbox, "--shared-secret-file", secretFile,
                    "--report", "json", "--log-level", "trace",
                ] + VerifyReceiptTesting.requestTimeoutOption)  // a retry would be a third request
                #expect(outcome.status == 1)
                let report = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
                #expect(report["selected"] as? Int == 2)
                #expect(report["verified"] as? Int == 1)
                #expect(report["failed_by_reason"] as? [String: Int] == ["apple_status": 1])
                #expect(report["now_ms"] as? Int == 1_769_644_800_000)
                #expect(report["exit_code"] as? Int == 1)
                #expect(await server.received.map(\.password) == ["file-secret", "file-secret"])
                #expect(!outcome.stderr.contains("file-secret"))
                #expect(!outcome.stderr.contains("R-ok"))
                #expect(outcome.stderr.contains("verification failed; entitlement kept"))
            }
        }
    }

    /// A row that lapsed on the UTC day a week before the run's is asked on its turn, counted as
    /// `selected_lapsed` in the report and the metrics; one that lapsed a day earlier is not.
    @Test func aLapsedRowOnItsTurnIsAskedAndCounted() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let t0 = AppleJSON.t0, day = AppleJSON.day, hour = AppleJSON.hour
                var lapsed = SubscriptionState(
                    originalTransactionID: "1000000001", productID: "premium.monthly", environment: "Production",
                    expiresAt: t0 + 21 * day + 10 * hour, autoRenewStatus: false, autoRenewProductID: "premium.monthly", expirationIntent: 1)
                try db.insert(userID: "came-back", receipt: "R-back", lapsed)
                lapsed.originalTransactionID = "1000000002"
                lapsed.expiresAt = t0 + 20 * day + 10 * hour
                try db.insert(userID: "not-its-turn", receipt: "R-later", lapsed)
                // Resubscribed in the App Store on day 25: Apple's answer for the stored receipt.
                let back = AppleJSON.Transaction(transactionID: "2000000002", purchaseMs: t0 + 25 * day, expiresMs: t0 + 55 * day)
                await server.script("R-back", [.json(AppleJSON.valid(transactions: [AppleJSON.Transaction(expiresMs: t0 + 21 * day + 10 * hour), back], renewals: [AppleJSON.Renewal()]))])
                let metrics = db.directory.appendingPathComponent("lapsed.prom").path
                let outcome = try await statusPoller([
                    "run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--now", "2026-01-29T00:00:00Z",
                    "--production-url", production, "--sandbox-url", sandbox, "--report", "json", "--metrics-file", metrics,
                ] + VerifyReceiptTesting.requestTimeoutOption, environment: ["APPSTORE_SHARED_SECRET": "s"])  // a retry would be a second request
                #expect(outcome.status == 0, "\(outcome.stderr)")
                let report = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
                #expect(report["selected"] as? Int == 1)
                #expect(report["selected_lapsed"] as? Int == 1)
                #expect(report["updated"] as? Int == 1)
                #expect(await server.received.count == 1)
                let row = try await db.store.subscriptions(ids: [1]).first
                #expect(row?.state.expiresAt == t0 + 55 * day)
                #expect(row?.state.entitlement(at: t0 + 28 * day) == .active)
                let prom = try String(contentsOfFile: metrics, encoding: .utf8)
                #expect(prom.contains(#"status_poller_run_selected_lapsed{mode="nightly"} 1"#), "\(prom)")
            }
        }
    }

    @Test func sharedSecretMismatchExitsThree() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                try db.insert(userID: "u", receipt: "R")
                await server.script("R", [.json(AppleJSON.status(21004))])
                let outcome = try await statusPoller(
                    ["run", "--database", db.path, "--bundle-id", "x", "--production-url", production, "--sandbox-url", sandbox],
                    environment: ["APPSTORE_SHARED_SECRET": "wrong"])
                #expect(outcome.status == 3)
                #expect(outcome.stdout.contains("ABORTED    Apple answered 21004"))
            }
        }
    }

    @Test func migrateCreatesThenReportsUpToDate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("new.sqlite").path
        let first = try await statusPoller(["migrate", "--database", path])
        #expect(first.status == 0)
        #expect(first.stdout == "applied 23 migration(s) to \(path): v1: subscriptions and entitlements, v2: run history, audit trail, backfill targets, v3: index-backed nightly selection, v4: the backend that answered, v5: hear the end of billing retry, and a user's every row on an upload, v6: the lapsed sweep, v7: who brought an answer, and the newer answer wins, v8: App Store Server Notifications, v9: notification history checkpoints, v10: rows with fresh Apple data, v11: the build of each run, v12: the chain's transactions, and Apple's status as the check, v13: events outbox, v14: renewal extensions, v15: consumption requests, v16: when an endpoint got each event, v17: retention, v18: the transaction ledger, v19: recoveries in the ledger, v20: paid periods in subscription order, v21: the notification lag on the audit trail, v22: the report's columns on the audit trail, v23: the ledger's offers in subscription order\n")
        let second = try await statusPoller(["migrate", "--database", path])
        #expect(second.stdout == "schema is up to date: \(path)\n")
        let nowhere = try await statusPoller(["migrate", "--database", "/nonexistent-dir/x.sqlite"])
        #expect(nowhere.status == 2)
        #expect(nowhere.stderr.contains("cannot open the database at /nonexistent-dir/x.sqlite"))
    }
}
