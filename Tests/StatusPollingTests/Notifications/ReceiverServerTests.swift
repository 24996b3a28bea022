import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOSSL
import ReceiverServer
import SQLiteStore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The receiver over real HTTP on loopback, on every store: Apple's POST answered 200 only after
/// the notification is recorded and applied, 4xx with nothing stored for a body refused, 503 when
/// the store cannot take the write; `/healthz` and `/metrics` beside it.
@Suite struct ReceiverServerTests {
    typealias Kit = SignedPayloads
    typealias Make = NotificationVerificationTests
    typealias Ingest = NotificationIngestTests

    static let secret = "v1-shared-secret-0123456789abcdef"

    static func receiver(_ inbox: any NotificationInbox, pki: TestPKI, secret: String? = Self.secret, now: Int64 = Kit.signedDate + 60_000) -> NotificationReceiver {
        var quiet = Logger(label: "receiver-tests")
        quiet.logLevel = .critical
        return NotificationReceiver(
            .init(bundleID: Kit.bundle, appAppleID: Make.appAppleID, sharedSecret: secret.map(SharedSecret.init), trustedRoots: [pki.root]),
            inbox: inbox, logger: quiet, clock: { now })
    }

    /// Serves `receiver` on a free port and runs `body` with a poster for it.
    static func serving<T: Sendable>(
        _ receiver: NotificationReceiver, metrics: ReceiverMetrics = ReceiverMetrics(), maxBodyBytes: Int = ReceiverServer.Settings.defaultMaxBodyBytes,
        _ body: (Poster) async throws -> T
    ) async throws -> T {
        var quiet = Logger(label: "receiver-server-tests")
        quiet.logLevel = .critical
        return try await ReceiverServer.withRunning(receiver, metrics: metrics, settings: .init(host: "127.0.0.1", port: 0, maxBodyBytes: maxBodyBytes), logger: quiet) { port in
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.patientClient)
            do {
                let result = try await body(Poster(client: client, base: "http://127.0.0.1:\(port)"))
                try await client.shutdown()
                return result
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }

    /// A client for a machine busy with the rest of the suite (other suites run at the same
    /// time): as many connections as the tests post at once, and minutes, not seconds, to get one.
    static var patientClient: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(120), read: .seconds(120))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        return configuration
    }

    struct Poster: Sendable {
        let client: HTTPClient
        let base: String

        func post(_ body: [UInt8], path: String = "/app-store/notifications") async throws -> (status: Int, body: String) {
            var request = HTTPClientRequest(url: base + path)
            request.method = .POST
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await client.execute(request, timeout: .seconds(60))
            return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
        }

        func post(json: Any) async throws -> (status: Int, body: String) {
            try await post(Array(try JSONSerialization.data(withJSONObject: json)))
        }

        func get(_ path: String) async throws -> (status: Int, body: String) {
            let response = try await client.execute(HTTPClientRequest(url: base + path), timeout: .seconds(60))
            return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 22)))
        }
    }

    static func signed(
        _ pki: TestPKI, uuid: String, chain: String = "1000000100", signedAt: Int64 = Kit.signedDate, expires: Int64 = 1_791_600_000_000,
        transaction changes: [String: Any] = [:]
    ) -> [String: Any] {
        let transaction = Kit.transaction(["expiresDate": expires, "signedDate": signedAt, "originalTransactionId": chain].merging(changes) { $1 })
        let data = Make.data(pki, transaction: transaction, renewal: Kit.renewal(["signedDate": signedAt, "originalTransactionId": chain]))
        return ["signedPayload": Make.outer(pki, data: data, changes: ["notificationUUID": uuid, "signedDate": signedAt])]
    }

    /// A V1 body of Apple's current shape (`unified_receipt`).
    static func version1(password: String, expires: Int64 = 1_791_600_000_000, receipt: String = "R-from-apple") -> [String: Any] {
        [
            "notification_type": "DID_RENEW", "password": password, "environment": "PROD", "bid": Kit.bundle, "bvrs": "42",
            "auto_renew_status": "true", "auto_renew_product_id": "com.example.premium.yearly", "original_transaction_id": "1000000100",
            "unified_receipt": [
                "environment": "Production", "status": 0, "latest_receipt": receipt,
                "latest_receipt_info": [[
                    "original_transaction_id": "1000000100", "transaction_id": "1000000200", "product_id": "com.example.premium.monthly",
                    "purchase_date_ms": "\(expires - 2_592_000_000)", "expires_date_ms": "\(expires)",
                ]],
                "pending_renewal_info": [[
                    "original_transaction_id": "1000000100", "product_id": "com.example.premium.monthly",
                    "auto_renew_product_id": "com.example.premium.yearly", "auto_renew_status": "1",
                ]],
            ],
        ]
    }

    @Test(arguments: StoreKind.available) func aVersion2NotificationIsAppliedBeforeItsTwoHundred(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let id = try await db.insert(userID: "u", receipt: "R", Ingest.monthly)
            let metrics = ReceiverMetrics()
            try await Self.serving(Self.receiver(db.store, pki: pki), metrics: metrics) { (poster: Poster) async throws in
                let body = Self.signed(pki, uuid: "n-1")
                #expect(try await poster.post(json: body) == (200, "{\"outcome\":\"applied\"}\n"))
                #expect(try await db.store.subscription(id: id)?.state.expiresAt == 1_791_600_000_000)
                #expect(try await poster.post(json: body) == (200, "{\"outcome\":\"duplicate\"}\n"))
                #expect(try await poster.get("/healthz") == (200, "ok\n"))
                let text = try await poster.get("/metrics").body
                #expect(text.contains(#"status_poller_notifications_received_total{version="2",type="DID_RENEW"} 2"#))
                #expect(text.contains(#"status_poller_notifications_total{outcome="applied"} 1"#))
                #expect(text.contains(#"status_poller_notifications_total{outcome="duplicate"} 1"#))
                #expect(text.contains(#"status_poller_notifications_refused_total{reason="signature"} 0"#))
                #expect(text.contains("status_poller_notification_request_duration_seconds_count 2"))
            }
            #expect(try await db.store.history(userID: "u").map(\.notificationID) == ["n-1"])
        }
    }

    @Test(arguments: StoreKind.available) func aRefusedBodyStoresNothingAndNamesItsReason(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let other = try TestPKI()
            let id = try await db.insert(userID: "u", receipt: "R", Ingest.monthly)
            let metrics = ReceiverMetrics()
            try await Self.serving(Self.receiver(db.store, pki: pki), metrics: metrics, maxBodyBytes: 64 * 1024) { (poster: Poster) async throws in
                // Signed by a chain to another root.
                #expect(try await poster.post(json: Self.signed(other, uuid: "n-x")) == (400, "{\"refused\":\"signature\"}\n"))
                // A tampered payload: the signature no longer matches.
                let good = try #require(Self.signed(pki, uuid: "n-t")["signedPayload"] as? String)
                let parts = good.split(separator: ".")
                let forged = Base64URL.encode(Array(#"{"notificationType":"REFUND","notificationUUID":"n-t","signedDate":1790000000000}"#.utf8))
                #expect(try await poster.post(json: ["signedPayload": "\(parts[0]).\(forged).\(parts[2])"]).status == 400)
                // For another app.
                #expect(try await poster.post(json: Self.signed(pki, uuid: "n-app", transaction: ["bundleId": "com.other.app"])).status == 400)
                #expect(try await poster.post(Array("not json".utf8)) == (400, "{\"refused\":\"malformed\"}\n"))
                #expect(try await poster.post(json: ["hello": "world"]).status == 400)
                #expect(try await poster.post([UInt8](repeating: 0x20, count: 70 * 1024)) == (413, "{\"refused\":\"too_large\"}\n"))
                #expect(try await poster.post(json: Self.version1(password: "wrong")) == (401, "{\"refused\":\"password\"}\n"))
                let text = try await poster.get("/metrics").body
                #expect(text.contains(#"status_poller_notifications_refused_total{reason="signature"} 3"#))
                #expect(text.contains(#"status_poller_notifications_refused_total{reason="malformed"} 2"#))
                #expect(text.contains(#"status_poller_notifications_refused_total{reason="too_large"} 1"#))
                #expect(text.contains(#"status_poller_notifications_refused_total{reason="password"} 1"#))
            }
            #expect(try await db.row("SELECT count(*) AS n FROM app_store_notifications") == ["n": "0"])
            #expect(try await db.store.subscription(id: id)?.state == Ingest.monthly)
            #expect(try await db.store.history(userID: "u") == [])
        }
    }

    @Test(arguments: StoreKind.available) func aVersion1NotificationNeedsTheSharedSecretAndReplacesTheReceipt(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let id = try await db.insert(userID: "u", receipt: "R", Ingest.monthly)
            try await Self.serving(Self.receiver(db.store, pki: pki, secret: nil)) { (poster: Poster) async throws in
                #expect(try await poster.post(json: Self.version1(password: Self.secret)) == (401, "{\"refused\":\"v1_disabled\"}\n"))
            }
            try await Self.serving(Self.receiver(db.store, pki: pki)) { (poster: Poster) async throws in
                #expect(try await poster.post(json: Self.version1(password: Self.secret + "x")).status == 401)
                // Apple's retry sends the same bytes.
                let body = Array(try JSONSerialization.data(withJSONObject: Self.version1(password: Self.secret)))
                #expect(try await poster.post(body) == (200, "{\"outcome\":\"applied\"}\n"))
                #expect(try await poster.post(body) == (200, "{\"outcome\":\"duplicate\"}\n"))
            }
            let row = try #require(try await db.store.subscription(id: id))
            #expect(row.latestReceipt == "R-from-apple")
            #expect(row.state.expiresAt == 1_791_600_000_000)
            #expect(row.state.autoRenewStatus == true)
            let stored = try await db.store.notifications(NotificationQuery())
            #expect(stored.count == 1)
            #expect(stored.first?.version == 1)
            #expect(stored.first?.id.hasPrefix("v1:") == true)
            #expect(stored.first?.id.count == 67)
            // Its data was true as of its latest event, the renewal's purchase, not its arrival.
            let appleStateAt = try #require(stored.first?.appleStateAtMs)
            #expect(appleStateAt == 1_789_008_000_000)
            #expect(try await db.row("SELECT receipt_uploaded FROM subscriptions WHERE id = \(id)") == ["receipt_uploaded": "0"])
        }
    }

    @Test(arguments: StoreKind.available) func aStoreThatCannotTakeTheWriteAnswers503AndChangesNoRow(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let id = try await db.insert(userID: "u", receipt: "R", Ingest.monthly)
            // The disk fills up under the notifications table.
            if kind == .sqlite {
                try await db.execute("CREATE TRIGGER disk_full BEFORE INSERT ON app_store_notifications BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
            } else {
                try await db.execute("CREATE FUNCTION fill_disk() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END $$")
                try await db.execute("CREATE TRIGGER disk_full BEFORE INSERT ON app_store_notifications FOR EACH ROW EXECUTE FUNCTION fill_disk()")
            }
            let metrics = ReceiverMetrics()
            try await Self.serving(Self.receiver(db.store, pki: pki), metrics: metrics) { (poster: Poster) async throws in
                #expect(try await poster.post(json: Self.signed(pki, uuid: "n-1")).status == 503)
                #expect(try await poster.get("/metrics").body.contains("status_poller_notifications_unavailable_total 1"))
            }
            #expect(try await db.store.subscription(id: id)?.state == Ingest.monthly)
            // Room again: Apple's retry goes through.
            try await db.execute(kind == .sqlite ? "DROP TRIGGER disk_full" : "DROP TRIGGER disk_full ON app_store_notifications")
            try await Self.serving(Self.receiver(db.store, pki: pki)) { (poster: Poster) async throws in
                #expect(try await poster.post(json: Self.signed(pki, uuid: "n-1")) == (200, "{\"outcome\":\"applied\"}\n"))
            }
        }
    }

    @Test(arguments: StoreKind.available) func aRowEnrolledAfterItsPurchaseNotificationTakesItByItsAppAccountToken(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let receiver = Self.receiver(db.store, pki: pki)
            let token = "0b7f5a52-8d1e-4c39-a0f4-5e6d7c8b9a01"
            let bought = Self.signed(pki, uuid: "n-buy", chain: "4000000100", transaction: ["appAccountToken": token])
            try await Self.serving(receiver) { (poster: Poster) async throws in
                #expect(try await poster.post(json: bought) == (200, "{\"outcome\":\"unmatched\"}\n"))
            }
            #expect(try await receiver.adoptWaiting() == 0)
            // The web service enrols the buyer with the token its app passed at purchase.
            let id = try await db.insert(userID: "buyer", receipt: "R")
            try await db.execute("UPDATE subscriptions SET app_account_token = '\(token)' WHERE id = \(id)")
            #expect(try await receiver.adoptWaiting() == 1)
            let row = try #require(try await db.store.subscription(id: id))
            #expect(row.state.originalTransactionID == "4000000100")
            #expect(row.state.expiresAt == 1_791_600_000_000)
            #expect(try await db.store.notifications(NotificationQuery()).map(\.outcome) == ["applied"])
            #expect(try await receiver.adoptWaiting() == 0)
        }
    }

    @Test func builtInTLSServesTLS12AndLaterAndABadKeyFileStopsTheStart() async throws {
        try await withStore(.sqlite) { db in
            let pki = try TestPKI()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let certificate = directory.appendingPathComponent("cert.pem"), key = directory.appendingPathComponent("key.pem")
            try Fixture.data("localhost-cert.pem").write(to: certificate)
            try Fixture.data("localhost-key.pem").write(to: key)
            let tls = try ReceiverServer.Settings.tls(certificateFile: certificate.path, keyFile: key.path)
            #expect(tls.minimumTLSVersion == .tlsv12)
            var quiet = Logger(label: "tls")
            quiet.logLevel = .critical
            try await ReceiverServer.withRunning(
                Self.receiver(db.store, pki: pki), metrics: ReceiverMetrics(), settings: .init(host: "127.0.0.1", port: 0, tls: tls), logger: quiet
            ) { port in
                var client = HTTPClient.Configuration()
                var trust = TLSConfiguration.makeClientConfiguration()
                trust.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(try Fixture.data("localhost-cert.pem")), format: .pem)])
                client.tlsConfiguration = trust
                let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
                let poster = Poster(client: http, base: "https://localhost:\(port)")
                let reply = try await poster.post(json: Self.signed(pki, uuid: "n-tls"))
                try await http.shutdown()
                #expect(reply == (200, "{\"outcome\":\"unmatched\"}\n"))
            }
            try Data("not a key".utf8).write(to: key)
            #expect(throws: (any Error).self) { try ReceiverServer.Settings.tls(certificateFile: certificate.path, keyFile: key.path) }
        }
    }

    @Test func aDatabaseLockedPastItsTimeoutAnswers503() async throws {
        try await withStore(.sqlite) { db in
            let pki = try TestPKI()
            let path = try #require(db.sqlitePath)
            try await db.withWriteLockHeld { _, _ in
                let impatient = try SQLiteSubscriptionStore.open(path: path, busyTimeout: 0.2)
                try await Self.serving(Self.receiver(impatient, pki: pki)) { (poster: Poster) async throws in
                    #expect(try await poster.post(json: Self.signed(pki, uuid: "n-1")) == (503, "{\"unavailable\":\"the store could not take the write; send it again\"}\n"))
                }
                try impatient.close()
            }
            #expect(try await db.row("SELECT count(*) AS n FROM app_store_notifications") == ["n": "0"])
        }
    }

    @Test(arguments: StoreKind.available) func concurrentNotificationsAreGroupCommittedAndEachIsApplied(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            var ids: [Int64] = []
            for index in 0..<40 {
                var state = Ingest.monthly
                state.originalTransactionID = "chain-\(index)"
                ids.append(try await db.insert(userID: "u\(index)", receipt: "R\(index)", state))
            }
            let bodies = try (0..<40).map { index in
                Array(try JSONSerialization.data(withJSONObject: Self.signed(pki, uuid: "n-\(index)", chain: "chain-\(index)")))
            }
            try await Self.serving(Self.receiver(db.store, pki: pki)) { (poster: Poster) async throws in
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for body in bodies { group.addTask { try await poster.post(body).status } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses == [Int](repeating: 200, count: 40))
            }
            for id in ids { #expect(try await db.store.subscription(id: id)?.state.expiresAt == 1_791_600_000_000) }
            #expect(try await db.row("SELECT count(*) AS n FROM app_store_notifications WHERE outcome = 'applied'") == ["n": "40"])
        }
    }
}
