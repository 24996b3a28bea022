import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
import SQLiteStore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The catch-up from Apple's notification history, on every store, against a real HTTP server:
/// what the receiver already took is a duplicate, what it missed is applied with `source =
/// history`, the checkpoint moves only after the last page, and a catch-up cut short between
/// pages is read again from the same start and applies each record once.
@Suite struct NotificationCatchUpTests {
    typealias Kit = SignedPayloads
    typealias Server = ReceiverServerTests

    /// The history the scripted App Store answers with: pages of signed payloads, or a failure
    /// on a page; and the request bodies it saw.
    final class History: Sendable {
        let pages = Mutex<[[String]]>([])
        let failPage = Mutex<Int?>(nil)
        let starts = Mutex<[Int64]>([])
    }

    /// The test PKI's root and an In-App Purchase key as files beside the database, for the binary.
    static func credentialFiles(_ pki: TestPKI, beside database: String) throws -> (root: URL, key: URL) {
        let directory = URL(fileURLWithPath: database).deletingLastPathComponent()
        let root = directory.appendingPathComponent("root.pem"), key = directory.appendingPathComponent("key.p8")
        try pki.root.serializeAsPEM().pemString.write(to: root, atomically: true, encoding: .utf8)
        try AppStoreServerJWTTests.pem.write(to: key, atomically: true, encoding: .utf8)
        return (root, key)
    }

    static func payload(_ pki: TestPKI, uuid: String, chain: String, signedAt: Int64, expires: Int64) -> String {
        Server.signed(pki, uuid: uuid, chain: chain, signedAt: signedAt, expires: expires, transaction: ["transactionId": "tx-\(uuid)"])["signedPayload"] as! String
    }

    @Test(arguments: StoreKind.available) func missedNotificationsAreAppliedOnceAndTheCheckpointMovesAfterTheLastPage(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let answers = ServerAPIAnswers(pki: pki)
            let t0 = Kit.signedDate + 3_600_000
            var ids: [String: Int64] = [:]
            for chain in ["A", "B", "C"] {
                var state = NotificationIngestTests.monthly
                state.originalTransactionID = "7000000\(chain)"
                ids[chain] = try await db.insert(userID: "u\(chain)", receipt: "R\(chain)", state)
            }
            let a1 = Self.payload(pki, uuid: "a1", chain: "7000000A", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            let b1 = Self.payload(pki, uuid: "b1", chain: "7000000B", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            let c1 = Self.payload(pki, uuid: "c1", chain: "7000000C", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            let a2 = Self.payload(pki, uuid: "a2", chain: "7000000A", signedAt: Kit.signedDate + 1_000, expires: 1_794_200_000_000)
            let b2 = Self.payload(pki, uuid: "b2", chain: "7000000B", signedAt: Kit.signedDate + 1_000, expires: 1_794_200_000_000)
            // The receiver took a1 when Apple pushed it; b1 and c1 it missed.
            let clock = Mutex(t0)
            var quiet = Logger(label: "catch-up")
            quiet.logLevel = .critical
            let receiver = NotificationReceiver(
                .init(bundleID: Kit.bundle, appAppleID: NotificationVerificationTests.appAppleID, trustedRoots: [pki.root]), inbox: db.store, logger: quiet,
                clock: { clock.withLock { $0 } })
            #expect(await receiver.receive(Array(#"{"signedPayload":"\#(a1)"}"#.utf8)) == .accepted(.applied, version: 2, type: "DID_RENEW"))

            let history = History()
            let router = Router()
            router.post("inApps/v1/notifications/history") { request, _ -> Response in
                var request = request
                let body = try JSONSerialization.jsonObject(with: Data(buffer: try await request.collectBody(upTo: 1 << 16))) as! [String: Any]
                let page = Int(request.uri.queryParameters.get("paginationToken") ?? "0")!
                if page == 0 { history.starts.withLock { $0.append(body["startDate"] as! Int64) } }
                if history.failPage.withLock({ $0 }) == page {
                    return Response(status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: "down")))
                }
                let pages = history.pages.withLock { $0 }
                let records = pages[page].map { ["signedPayload": $0, "sendAttempts": [] as [Any]] as [String: Any] }
                var answer: [String: Any] = ["notificationHistory": records, "hasMore": page + 1 < pages.count]
                if page + 1 < pages.count { answer["paginationToken"] = String(page + 1) }
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: try JSONSerialization.data(withJSONObject: answer))))
            }
            try await withLoopbackServer(router) { port in
                let configuration = try answers.configuration(production: "http://127.0.0.1:\(port)", sandbox: "http://127.0.0.1:\(port)/sandbox", attempts: 2)
                try await ServerAPIClient.withClient(configuration) { client in
                    let catchUp = NotificationCatchUp(client: client, receiver: receiver, inbox: db.store)

                    history.pages.withLock { $0 = [[a1, b1], [c1]] }
                    let first = try await catchUp.run(.production, nowMs: t0, logger: quiet)
                    #expect(first.pages == 2)
                    #expect(first.records == 3)
                    #expect(first.outcomes == [.duplicate: 1, .applied: 2])
                    #expect(first.fromMs == t0 - 24 * 3_600_000)
                    #expect(try await db.store.historyCheckpoint(.production) == t0)
                    for chain in ["A", "B", "C"] {
                        #expect(try await db.store.subscription(id: ids[chain]!)?.state.expiresAt == 1_791_600_000_000, "\(chain)")
                    }
                    let sources = try await db.store.notifications(NotificationQuery()).map { "\($0.id):\($0.source)" }.sorted()
                    #expect(sources == ["a1:push", "b1:history", "c1:history"])

                    // Cut short: the second page fails. What the first held is applied, the
                    // checkpoint has not moved.
                    clock.withLock { $0 = t0 + 3_600_000 }
                    history.pages.withLock { $0 = [[a2], [b2]] }
                    history.failPage.withLock { $0 = 1 }
                    await #expect(throws: VerificationFailure.self) { try await catchUp.run(.production, nowMs: t0 + 3_600_000, logger: quiet) }
                    #expect(try await db.store.historyCheckpoint(.production) == t0)
                    #expect(try await db.store.subscription(id: ids["A"]!)?.state.expiresAt == 1_794_200_000_000)
                    #expect(try await db.store.subscription(id: ids["B"]!)?.state.expiresAt == 1_791_600_000_000)

                    // The next one reads the same window again: a2 a duplicate, b2 applied once.
                    history.failPage.withLock { $0 = nil }
                    let third = try await catchUp.run(.production, nowMs: t0 + 7_200_000, logger: quiet)
                    #expect(third.outcomes == [.duplicate: 1, .applied: 1])
                    #expect(third.fromMs == t0 - 3_600_000)
                    // Read without a gap since the first catch-up's start: the failed one left none.
                    #expect(third.coveredFromMs == t0 - 24 * 3_600_000)
                    #expect(try await db.store.historyCheckpoint(.production) == t0 + 7_200_000)
                    #expect(try await db.store.subscription(id: ids["B"]!)?.state.expiresAt == 1_794_200_000_000)

                    // A checkpoint from a clock that ran ahead: the window still ends at the clock.
                    try await db.store.setHistoryCheckpoint(.production, readFromMs: t0 + 7_200_000, throughMs: t0 + 100 * 3_600_000, nowMs: t0)
                    history.pages.withLock { $0 = [[]] }
                    let ahead = try await catchUp.run(.production, nowMs: t0 + 10_800_000, logger: quiet)
                    #expect(ahead.fromMs == t0 + 7_200_000)
                    // An empty reading proves nothing (an app without a notification URL reads only
                    // empty pages): the run may not skip rows on its account.
                    #expect(ahead.coveredFromMs == nil)
                    // A reading that starts after the last one ended leaves a gap: the coverage starts again.
                    #expect(try await db.store.setHistoryCheckpoint(.production, readFromMs: t0 + 200 * 3_600_000, throughMs: t0 + 201 * 3_600_000, nowMs: t0)
                        == t0 + 200 * 3_600_000)
                }
            }
            #expect(history.starts.withLock { $0 } == [t0 - 24 * 3_600_000, t0 - 3_600_000, t0 - 3_600_000, t0 + 7_200_000])
            // Each notification changed its row once: one audit row each.
            #expect(try await db.row("SELECT count(*) AS n FROM subscription_events") == ["n": "5"])
            #expect(try await db.row("SELECT count(DISTINCT notification_id) AS n FROM subscription_events") == ["n": "5"])
            // Each period once in the ledger, with who brought it first: the push, or the catch-up.
            let ledger = try await db.rows("SELECT transaction_id, first_source, subscription_id FROM subscription_transactions ORDER BY transaction_id")
            #expect(ledger.map { "\($0["transaction_id"]!):\($0["first_source"]!)" } == [
                "tx-a1:notification", "tx-a2:history", "tx-b1:history", "tx-b2:history", "tx-c1:history",
            ])
            #expect(ledger.map { $0["subscription_id"]! } == ["A", "A", "B", "B", "C"].map { "\(ids[$0]!)" })
        }
    }

    @Test func theCommandCatchesUpBothEnvironmentsAndReportsWhatItDid() async throws {
        try await withStore(.sqlite) { db in
            let pki = try TestPKI()
            let path = try #require(db.sqlitePath)
            let (root, key) = try Self.credentialFiles(pki, beside: path)
            var state = NotificationIngestTests.monthly
            state.originalTransactionID = "7000000A"
            let id = try await db.insert(userID: "u", receipt: "R", state)
            let missed = Self.payload(pki, uuid: "missed", chain: "7000000A", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            let router = Router()
            router.post("inApps/v1/notifications/history") { _, _ -> Response in
                let answer: [String: Any] = ["notificationHistory": [["signedPayload": missed]], "hasMore": false]
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: try JSONSerialization.data(withJSONObject: answer))))
            }
            router.post("sandbox/inApps/v1/notifications/history") { _, _ -> Response in
                Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"notificationHistory":[],"hasMore":false}"#)))
            }
            try await withLoopbackServer(router) { port in
                let outcome = try await StatusPollerProcess.launch([
                    "notifications", "catch-up", "--database", path, "--bundle-id", Kit.bundle, "--app-apple-id", String(NotificationVerificationTests.appAppleID),
                    "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--key-id", "ABCDEFGHIJ", "--private-key-file", key.path,
                    "--server-api-url", "http://127.0.0.1:\(port)", "--server-api-sandbox-url", "http://127.0.0.1:\(port)/sandbox",
                    "--trusted-root-file", root.path, "--now", "2026-09-21T15:00:00Z", "--report", "json",
                ]).outcome()
                #expect(outcome.status == 0, "\(outcome.stderr)")
                let reports = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]])
                #expect(reports.map { $0["environment"] as? String } == ["Production", "Sandbox"])
                #expect(reports.map { $0["records"] as? Int } == [1, 0])
                #expect(reports.first?["outcomes"] as? [String: Int] == ["applied": 1])
                #expect(reports.first?["from"] as? String == "2026-09-20 15:00:00")
            }
            #expect(try await db.store.subscription(id: id)?.state.expiresAt == 1_791_600_000_000)
            #expect(try await db.store.historyCheckpoint(.production) == 1_790_002_800_000)
            #expect(try await db.store.historyCheckpoint(.sandbox) == 1_790_002_800_000)
        }
    }

    @Test func theNightlyRunCatchesUpFirstUnlessToldNot() async throws {
        try await withStore(.sqlite) { db in
            let pki = try TestPKI()
            let path = try #require(db.sqlitePath)
            let (root, key) = try Self.credentialFiles(pki, beside: path)
            // Far from expiry at the run's clock: the poll does not ask about it.
            var state = NotificationIngestTests.monthly
            state.originalTransactionID = "7000000A"
            state.expiresAt = 1_791_000_000_000
            let id = try await db.insert(userID: "u", receipt: "R", state)
            let missed = Self.payload(pki, uuid: "missed", chain: "7000000A", signedAt: Kit.signedDate, expires: 1_793_600_000_000)
            let router = Router()
            let requests = Mutex(0)
            for prefix in ["", "sandbox/"] {
                router.post("\(prefix)inApps/v1/notifications/history") { _, _ -> Response in
                    requests.withLock { $0 += 1 }
                    let records: [[String: Any]] = prefix.isEmpty ? [["signedPayload": missed]] : []
                    let answer: [String: Any] = ["notificationHistory": records, "hasMore": false]
                    return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: try JSONSerialization.data(withJSONObject: answer))))
                }
            }
            try await withLoopbackServer(router) { port in
                let arguments = [
                    "run", "--database", path, "--bundle-id", Kit.bundle, "--backend", "server-api", "--app-apple-id", String(NotificationVerificationTests.appAppleID),
                    "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--key-id", "ABCDEFGHIJ", "--private-key-file", key.path,
                    "--server-api-url", "http://127.0.0.1:\(port)", "--server-api-sandbox-url", "http://127.0.0.1:\(port)/sandbox",
                    "--trusted-root-file", root.path, "--now", "2026-09-21T15:00:00Z", "--report", "json",
                ]
                let off = try await StatusPollerProcess.launch(arguments + ["--notification-history", "off"]).outcome()
                #expect(off.status == 0, "\(off.stderr)")
                #expect(try await db.store.historyCheckpoint(.production) == nil)
                #expect(try await db.store.subscription(id: id)?.state.expiresAt == 1_791_000_000_000)
                #expect((try JSONSerialization.jsonObject(with: Data(off.stdout.utf8)) as? [String: Any])?["catch_up"] == nil)
                // The catch-up is part of the run, under its lock: a run refused by the lock reads nothing.
                let lease = try await SQLiteDatabase(path: path).acquireRunLock(holder: .current(command: "status-poller run"))
                let refused = try await StatusPollerProcess.launch(arguments).outcome()
                lease.release()
                #expect(refused.status == 75, "\(refused.stderr)")
                #expect(requests.withLock { $0 } == 0)
                #expect(try await db.store.historyCheckpoint(.production) == nil)
                let on = try await StatusPollerProcess.launch(arguments).outcome()
                #expect(on.status == 0, "\(on.stderr)")
                let report = try #require(try JSONSerialization.jsonObject(with: Data(on.stdout.utf8)) as? [String: Any])
                #expect(report["selected"] as? Int == 0)
                // One report: what the catch-up read is in it.
                let catchUp = try #require(report["catch_up"] as? [String: Any])
                let environments = try #require(catchUp["environments"] as? [[String: Any]])
                #expect(environments.map { $0["environment"] as? String } == ["Production", "Sandbox"])
                #expect(environments.map { $0["records"] as? Int } == [1, 0])
                #expect(environments[0]["outcomes"] as? [String: Int] == ["applied": 1])
                #expect(environments[0]["covered_from_ms"] as? Int64 == 1_789_916_400_000)
                #expect(catchUp["failures"] as? [String: String] == [:])
                #expect(catchUp["mass_extensions_checked"] as? Int == 0)
                #expect(requests.withLock { $0 } == 2)
                let text = try await StatusPollerProcess.launch(arguments + ["--report", "text"]).outcome()
                #expect(text.stdout.contains("catch-up   Production 1 in 1 page (duplicate 1); Sandbox 0 in 1 page\n"), "\(text.stdout)")
            }
            #expect(try await db.store.subscription(id: id)?.state.expiresAt == 1_793_600_000_000)
            #expect(try await db.store.historyCheckpoint(.production) == 1_790_002_800_000)
            #expect(try await db.store.historyCheckpoint(.sandbox) == 1_790_002_800_000)
            #expect(try await db.store.notifications(NotificationQuery()).map { "\($0.id) \($0.source) \($0.outcome)" } == ["missed history applied"])
        }
    }

    @Test func theTestCommandReportsWhetherAppleReachedTheReceiver() async throws {
        try await withStore(.sqlite) { db in
            let pki = try TestPKI()
            let path = try #require(db.sqlitePath)
            let (root, key) = try Self.credentialFiles(pki, beside: path)
            let asked = Mutex(0)
            let result = Mutex("SUCCESS")
            let router = Router()
            router.post("sandbox/inApps/v1/notifications/test") { _, _ -> Response in
                Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"testNotificationToken":"tok-1"}"#)))
            }
            router.get("sandbox/inApps/v1/notifications/test/:token") { _, context -> Response in
                // Not yet, then the attempt.
                guard context.parameters.get("token") == "tok-1", asked.withLock({ $0 += 1; return $0 }) > 1 else {
                    return Response(status: .notFound, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"errorCode":4040008,"errorMessage":"not yet"}"#)))
                }
                let answer = #"{"signedPayload":"x.y.z","sendAttempts":[{"attemptDate":1790002800000,"sendAttemptResult":"\#(result.withLock { $0 })"}]}"#
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: answer)))
            }
            try await withLoopbackServer(router) { port in
                let arguments = [
                    "notifications", "test", "--bundle-id", Kit.bundle, "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--key-id", "ABCDEFGHIJ",
                    "--private-key-file", key.path, "--server-api-url", "http://127.0.0.1:\(port)", "--server-api-sandbox-url", "http://127.0.0.1:\(port)/sandbox",
                    "--trusted-root-file", root.path,
                ]
                let reached = try await StatusPollerProcess.launch(arguments).outcome()
                #expect(reached.status == 0, "\(reached.stderr)")
                #expect(reached.stdout == "Apple reached the receiver at 2026-09-21 15:00:00 (Sandbox, attempt 1).\n")
                asked.withLock { $0 = 0 }
                result.withLock { $0 = "TIMED_OUT" }
                let failed = try await StatusPollerProcess.launch(arguments).outcome()
                #expect(failed.status == 1)
                #expect(failed.stdout == "Apple could not deliver the test notification at 2026-09-21 15:00:00: TIMED_OUT. Check the URL in App Store Connect, TLS and the receiver's log.\n")
            }
        }
    }
}
