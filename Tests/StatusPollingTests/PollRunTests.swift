import Foundation
import InMemoryLogging
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
@testable import StatusPolling

/// Whole runs: each store (SQLite, and PostgreSQL when the test script started one), a real HTTP
/// server on loopback answering like Apple.
@Suite struct PollRunTests {
    typealias T = AppleJSON.Transaction
    typealias R = AppleJSON.Renewal
    let t0 = AppleJSON.t0
    let day = AppleJSON.day
    /// The run's clock: day 29 of the first month, so a t0 + 30 days expiry is near.
    var now: Int64 { t0 + 29 * day + 12 * AppleJSON.hour }

    func verified(_ otid: String, expires: Int64? = nil) -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: otid, productID: "premium.monthly", environment: "Production",
            expiresAt: expires ?? t0 + 30 * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
    }

    /// Runs one poll against `server` and `db`.
    /// The request timeout never fires (10 s did, for a loopback answer on a busy CI machine), so
    /// counts of requests do not depend on the machine's speed. The receipts in `timingOut`, which
    /// the server must never answer, are asked through a client of their own whose timeout is short.
    func poll(_ db: StoreUnderTest, _ production: String, _ sandbox: String, attempts: Int = 3, concurrency: Int = 4, pageSize: Int = 500, batchSize: Int = 100, timingOut: Set<String> = [], dryRun: Bool = false, windows: SelectionWindows = SelectionWindows(), logs: InMemoryLogHandler = InMemoryLogHandler()) async throws -> RunReport {
        var logger = Logger(label: "test") { _ in logs }
        logger.logLevel = .trace
        let configuration = VerifyReceiptTesting.configuration(production, sandbox, attempts: attempts)
        return try await KeepAliveHTTPClient.withClient(VerifyReceiptTesting.http) { http in
            let client = VerifyReceiptClient(configuration: configuration, http: http, jitter: { 0.5 })
            var source: any SubscriptionStatusSource = client
            if !timingOut.isEmpty {
                var strict = configuration
                strict.requestTimeout = .seconds(2)
                source = ReceiptRoutedSource(receipts: timingOut, them: VerifyReceiptClient(configuration: strict, http: http, jitter: { 0.5 }), others: client)
            }
            let run = PollRun(
                configuration: .init(
                    bundleID: AppleJSON.bundleID, nowMs: now, selection: .nightly(windows), concurrency: concurrency, pageSize: pageSize, batchSize: batchSize, dryRun: dryRun),
                store: db.store, source: source, logger: logger)
            return await run.run()
        }
    }

    func renewal(_ otid: String, expires: Int64) -> String {
        AppleJSON.valid(latestReceipt: "NEW-\(otid)", transactions: [
            T(originalTransactionID: otid, transactionID: "\(otid)-1", purchaseMs: t0, expiresMs: t0 + 30 * day),
            T(originalTransactionID: otid, transactionID: "\(otid)-2", purchaseMs: t0 + 30 * day, expiresMs: expires),
        ], renewals: [R(originalTransactionID: otid)])
    }

    @Test(arguments: StoreKind.available) func aMixedNightWritesExactlyWhatAppleSaid(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let newcomer = try await db.insert(userID: "newcomer", receipt: "R-new")
                let renewing = try await db.insert(userID: "renewing", receipt: "R-renew", verified("otid-renew"))
                let failingCharge = try await db.insert(userID: "grace", receipt: "R-grace", verified("otid-grace"))
                let flaky = try await db.insert(userID: "flaky", receipt: "R-flaky", verified("otid-flaky"))
                let refunded = try await db.insert(userID: "refund", receipt: "R-refund", verified("otid-refund"))
                let broken = try await db.insert(userID: "broken", receipt: "R-broken", verified("otid-broken"))
                let replayer = try await db.insert(userID: "replayer", receipt: "R-replay")
                let otherApp = try await db.insert(userID: "other-app", receipt: "R-other", verified("otid-other"))
                let farAway = try await db.insert(userID: "far-away", receipt: "R-far", verified("otid-far", expires: t0 + 200 * day))

                await server.script("R-new", [.json(AppleJSON.valid(latestReceipt: "NEW-new", transactions: [T(originalTransactionID: "otid-new", expiresMs: t0 + 33 * day)], renewals: [R(originalTransactionID: "otid-new")]))])
                await server.script("R-renew", [.json(renewal("otid-renew", expires: t0 + 60 * day))])
                await server.script("R-grace", [.json(AppleJSON.valid(transactions: [T(originalTransactionID: "otid-grace")], renewals: [R(originalTransactionID: "otid-grace", expirationIntent: "2", isInBillingRetry: "1", graceEndsMs: t0 + 46 * day)]))])
                await server.script("R-flaky", [.http(503), .drop, .json(renewal("otid-flaky", expires: t0 + 60 * day))])
                await server.script("R-refund", [.json(AppleJSON.valid(transactions: [T(originalTransactionID: "otid-refund", cancellationMs: t0 + 20 * day)], renewals: [R(originalTransactionID: "otid-refund", autoRenewStatus: "0")]))])
                await server.script("R-broken", [.json(AppleJSON.status(21003))])
                await server.script("R-replay", [.json(AppleJSON.valid(transactions: [T(originalTransactionID: "otid-renew", expiresMs: t0 + 60 * day)], renewals: []))])
                await server.script("R-other", [.json(AppleJSON.valid(bundleID: "com.other.app", transactions: [T(originalTransactionID: "otid-other")], renewals: []))])

                let before = (replayer: try await db.contractColumns(replayer), broken: try await db.contractColumns(broken), other: try await db.contractColumns(otherApp), far: try await db.contractColumns(farAway))
                let logs = InMemoryLogHandler()
                let report = try await poll(db, production, sandbox, concurrency: 1, logs: logs)

                // Receipts are personal data and the secret is a secret: neither reaches a log line,
                // even at trace level (the HTTP client's own lines included).
                #expect(!logs.entries.isEmpty)
                for entry in logs.entries {
                    let line = "\(entry.message) \(entry.metadata)"
                    for secret in ["R-new", "R-renew", "R-grace", "R-flaky", "R-replay", "NEW-", "shh-secret"] {
                        #expect(!line.contains(secret), "log line leaks \(secret): \(line)")
                    }
                }
                #expect(logs.entries.contains { $0.message == "subscription changed" && $0.metadata["subscription.id"] == "\(newcomer)" && $0.metadata["transition"] == "first_verified" })

                #expect(report.selected == 8)
                #expect(report.verified == 5)
                #expect(report.updated == 5)
                #expect(report.unchanged == 0)
                #expect(report.failedByReason == [.appleStatus: 1, .conflict: 1, .bundleMismatch: 1])
                #expect(report.failedByAppleStatus == [21003: 1])
                #expect(report.transitions == [.firstVerified: 1, .renewed: 2, .enteredGrace: 1, .refunded: 1])
                #expect(report.retries == 2)
                #expect(report.requests == 10)
                #expect(report.exitCode == .someFailed)
                #expect(report.aborted == nil)

                #expect(try await db.store.subscription(id: newcomer)?.state == SubscriptionState(
                    originalTransactionID: "otid-new", productID: "premium.monthly", environment: "Production",
                    expiresAt: t0 + 33 * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly").holding("2000000001", purchasedAt: t0))
                #expect(try await db.store.subscription(id: newcomer)?.latestReceipt == "NEW-new")
                #expect(try await db.store.subscription(id: renewing)?.state == verified("otid-renew", expires: t0 + 60 * day).holding("otid-renew-2", purchasedAt: t0 + 30 * day))
                #expect(try await db.store.subscription(id: renewing)?.latestReceipt == "NEW-otid-renew")
                var grace = verified("otid-grace").holding("2000000001", purchasedAt: t0)
                grace.isInBillingRetry = true
                grace.gracePeriodExpiresAt = t0 + 46 * day
                grace.expirationIntent = 2
                #expect(try await db.store.subscription(id: failingCharge)?.state == grace)
                #expect(try await db.store.subscription(id: flaky)?.state == verified("otid-flaky", expires: t0 + 60 * day).holding("otid-flaky-2", purchasedAt: t0 + 30 * day))
                var refund = verified("otid-refund").holding("2000000001", purchasedAt: t0)
                refund.cancelledAt = t0 + 20 * day
                refund.autoRenewStatus = false
                #expect(try await db.store.subscription(id: refunded)?.state == refund)
                #expect(try await db.contractColumns(replayer) == before.replayer)
                #expect(try await db.contractColumns(broken) == before.broken)
                #expect(try await db.contractColumns(otherApp) == before.other)
                #expect(try await db.contractColumns(farAway) == before.far)
                #expect(await server.requests(for: "R-far").isEmpty)
                #expect(try await db.rawRow(otherApp)?["last_error_reason"] == "bundle_mismatch")

                // What the web service sees at the run's clock (the view reads the real clock, so
                // the Swift rule is applied to the stored rows at `now`).
                let states = try await [newcomer, renewing, failingCharge, refunded, broken, replayer].asyncMap { try await db.store.subscription(id: $0)!.state.entitlement(at: now) }
                #expect(states == [.active, .active, .active, .refunded, .active, .unverified])
            }
        }
    }

    @Test(arguments: StoreKind.available) func everyKindOfFailureKeepsThePreviousEntitlement(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                var graceState = verified("otid-0", expires: now - 2 * day)
                graceState.gracePeriodExpiresAt = now + 3 * day
                graceState.isInBillingRetry = true
                graceState.expirationIntent = 2
                let scripts: [(String, [ScriptedAppStore.Reply])] = [
                    ("R-503", [.http(503)]),
                    ("R-429", [.http(429, headers: ["Retry-After": "0"])]),
                    ("R-drop", [.drop]),
                    ("R-html", [.html]),
                    // Never answered, so its timeout fires however fast the machine.
                    ("R-slow", [.never]),
                    ("R-21003", [.json(AppleJSON.status(21003))]),
                    ("R-21010", [.json(AppleJSON.status(21010))]),
                    ("R-21100-false", [.json(AppleJSON.status(21100, retryFlag: ("is_retryable", "false")))]),
                    ("R-21005", [.json(AppleJSON.status(21005))]),
                    ("R-shape", [.json(#"{"status": 0, "receipt": {"bundle_id": "com.example.premium"}, "latest_receipt_info": [{"original_transaction_id": "x", "expires_date_ms": "soon"}]}"#)]),
                    ("R-bundle", [.json(AppleJSON.valid(bundleID: "com.other", transactions: [T()], renewals: []))]),
                    ("R-chain", [.json(AppleJSON.valid(transactions: [T(originalTransactionID: "someone-else")], renewals: []))]),
                ]
                var ids: [Int64] = []
                for (index, (receipt, replies)) in scripts.enumerated() {
                    var state = graceState
                    state.originalTransactionID = "otid-\(index)"
                    ids.append(try await db.insert(userID: "user-\(index)", receipt: receipt, state))
                    await server.script(receipt, replies)
                }
                let before = try await ids.asyncMap { try await db.contractColumns($0) }
                // Only R-slow's requests have a short timeout: every other answer must be taken, on any machine.
                let report = try await poll(db, production, sandbox, attempts: 2, concurrency: 6, timingOut: ["R-slow"])
                #expect(report.selected == scripts.count)
                #expect(report.verified == 0)
                #expect(report.failed == scripts.count)
                #expect(report.failedByReason == [
                    .httpStatus: 2, .transport: 1, .notJSON: 1, .timeout: 1, .appleStatus: 4,
                    .unexpectedResponse: 1, .bundleMismatch: 1, .chainNotInReceipt: 1,
                ])
                #expect(try await ids.asyncMap { try await db.contractColumns($0) } == before)
                for id in ids {
                    let raw = try #require(try await db.rawRow(id))
                    #expect(raw["consecutive_failures"] == "1")
                    #expect(raw["latest_receipt"] == scripts[Int(id - 1)].0)
                }
                // Each row keeps its grace period: the web service still grants access.
                for id in ids { #expect(try await db.store.subscription(id: id)?.state.entitlement(at: now) == .gracePeriod) }
            }
        }
    }

    @Test(arguments: StoreKind.available) func dryRunCallsAppleButWritesNothing(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                try await db.insert(userID: "owner", receipt: "R-owner", verified("otid-1"))
                try await db.insert(userID: "replayer", receipt: "R-replay")
                try await db.insert(userID: "broken", receipt: "R-broken", verified("otid-3"))
                await server.script("R-owner", [.json(renewal("otid-1", expires: t0 + 60 * day))])
                await server.script("R-replay", [.json(renewal("otid-1", expires: t0 + 60 * day))])
                await server.script("R-broken", [.json(AppleJSON.status(21003))])
                let snapshot = { try await db.rows("SELECT * FROM subscriptions ORDER BY id") }
                let before = try await snapshot()
                let report = try await poll(db, production, sandbox, dryRun: true)
                #expect(report.dryRun)
                #expect(report.verified == 1)
                #expect(report.updated == 1)
                #expect(report.transitions == [.renewed: 1])
                #expect(report.failedByReason == [.conflict: 1, .appleStatus: 1])
                #expect(try await snapshot() == before)
                #expect(await server.received.count == 3)
            }
        }
    }

    @Test(arguments: StoreKind.available) func sharedSecretMismatchAbortsBeforeMoreRequests(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for index in 0..<10 {
                    try await db.insert(userID: "u\(index)", receipt: "R\(index)", verified("otid-\(index)"))
                    await server.script("R\(index)", [.json(AppleJSON.status(21004))])
                }
                let before = try await Array(1...10).asyncMap { try await db.contractColumns(Int64($0)) }
                let report = try await poll(db, production, sandbox, concurrency: 1)
                #expect(report.exitCode == .aborted)
                #expect(report.aborted == RunAbort.sharedSecretMismatch.description)
                #expect(await server.received.count == 1)
                #expect(try await Array(1...10).asyncMap { try await db.contractColumns(Int64($0)) } == before)
                #expect(try await db.rawRow(1)?["consecutive_failures"] == "0")
            }
        }
    }

    @Test(arguments: StoreKind.available) func pagesAndConcurrencyStayBounded(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for index in 0..<40 {
                    try await db.insert(userID: "u\(index)", receipt: "R\(index)", verified("otid-\(index)"))
                    let answer = ScriptedAppStore.Reply.json(renewal("otid-\(index)", expires: t0 + 60 * day))
                    // The first five are held until all five arrived, so five are in flight at once
                    // however the machine schedules them; the rest linger a little, so a run that
                    // sent more than five at once would be seen.
                    await server.script("R\(index)", [index < 5 ? .afterRequests(5, answer) : .delayed(.milliseconds(20), answer)])
                }
                let report = try await poll(db, production, sandbox, concurrency: 5, pageSize: 7)
                #expect(report.selected == 40)
                #expect(report.verified == 40)
                #expect(report.transitions == [.renewed: 40])
                #expect(report.exitCode == .success)
                let received = await server.received.compactMap(\.receipt)
                #expect(received.count == 40)
                #expect(Set(received).count == 40)
                #expect(await server.maxInFlight == 5)
                // A second run the same night finds them renewed and far from expiry: nothing to do.
                let second = try await poll(db, production, sandbox)
                #expect(second.selected == 0)
                #expect(second.exitCode == .success)
            }
        }
    }

    @Test(arguments: StoreKind.available) func sandboxSubscriptionsAreRememberedAndAskedInSandboxFirst(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let id = try await db.insert(userID: "reviewer", receipt: "R-sb")
                await server.script("R-sb", environment: "production", [.json(AppleJSON.status(21007))])
                await server.script("R-sb", environment: "sandbox", [.json(AppleJSON.valid(environment: "Sandbox", latestReceipt: nil, transactions: [T(originalTransactionID: "otid-sb")], renewals: []))])
                let first = try await poll(db, production, sandbox)
                #expect(first.verified == 1)
                #expect(try await db.store.subscription(id: id)?.state.environment == "Sandbox")
                // The same clock: the row's data is fresh, so only a run that asks every row asks again.
                #expect(try await poll(db, production, sandbox).skippedFresh == 1)
                _ = try await poll(db, production, sandbox, windows: SelectionWindows(freshWithin: nil))
                #expect(await server.received.map(\.environment) == ["production", "sandbox", "sandbox"])
            }
        }
    }

    @Test(arguments: StoreKind.available) func deprecationHeadersAreLoggedOncePerRun(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                await server.setExtraHeaders(["Deprecation": "true", "Sunset": "Sat, 01 Jan 2028 00:00:00 GMT"])
                for index in 0..<6 {
                    try await db.insert(userID: "u\(index)", receipt: "R\(index)")
                    await server.script("R\(index)", [.json(AppleJSON.valid(transactions: [T(originalTransactionID: "otid-\(index)")], renewals: []))])
                }
                let logs = InMemoryLogHandler()
                let report = try await poll(db, production, sandbox, logs: logs)
                #expect(report.verified == 6)
                let warnings = logs.entries.filter { $0.message == "verifyReceipt is deprecated by Apple" }
                #expect(warnings.count == 1)
                #expect(warnings.first?.level == .warning)
                #expect(warnings.first?.metadata["headers"] == "Deprecation: true, Sunset: Sat, 01 Jan 2028 00:00:00 GMT")
            }
        }
    }

    @Test(arguments: StoreKind.available) func unreadableStoreAbortsTheRun(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await db.store.close()
            let report = try await poll(db, "http://127.0.0.1:9/verifyReceipt", "http://127.0.0.1:9/verifyReceipt")
            #expect(report.exitCode == .aborted)
            #expect(report.aborted?.hasPrefix("the store could not be read") == true)
            #expect(report.selected == 0)
        }
    }

    @Test func jsonReportIsOneDocumentWithEveryCount() throws {
        var report = RunReport(nowMs: 1_000, dryRun: false)
        report.selected = 3
        report.verified = 2
        report.updated = 1
        report.unchanged = 1
        report.requests = 5
        report.retries = 2
        report.countFailure(.init(.appleStatus, "x", upstreamStatus: .verifyReceipt(.notAuthenticated)))
        report.transitions = [.renewed: 1, .unchanged: 1]
        report.durationSeconds = 1.5
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        #expect(object["selected"] as? Int == 3)
        #expect(object["verified"] as? Int == 2)
        #expect(object["updated"] as? Int == 1)
        #expect(object["unchanged"] as? Int == 1)
        #expect(object["failed"] as? Int == 1)
        #expect(object["failed_by_reason"] as? [String: Int] == ["apple_status": 1])
        #expect(object["failed_by_apple_status"] as? [String: Int] == ["21003": 1])
        #expect(object["transitions"] as? [String: Int] == ["renewed": 1, "unchanged": 1])
        #expect(object["retries"] as? Int == 2)
        #expect(object["requests"] as? Int == 5)
        #expect(object["duration_seconds"] as? Double == 1.5)
        #expect(object["exit_code"] as? Int == 1)
        #expect(object["dry_run"] as? Bool == false)
        #expect(object["throttled"] as? Int == 0)
        #expect(object["lowest_concurrency"] as? Int == 0)
    }
}

extension Array {
    func asyncMap<U>(_ transform: (Element) async throws -> U) async rethrows -> [U] {
        var result: [U] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
