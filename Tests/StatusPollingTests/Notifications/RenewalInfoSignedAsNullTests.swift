import Foundation
import Hummingbird
import HTTPTypes
import InMemoryLogging
import Logging
import NIOCore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Genuine Sandbox answers carry renewal info Apple signed as JSON `null` beside a valid signed
/// transaction. On every path that reads signed data — Get All Subscription Statuses, a pushed
/// V2 notification, the notification history — the transaction applies, Apple's `status` sets
/// billing retry and grace, the row keeps its other renewal columns, and a log line says so.
@Suite struct RenewalInfoSignedAsNullTests {
    typealias Kit = SignedPayloads
    typealias Make = NotificationVerificationTests

    /// The row as it stood before Apple's answer: last month's period, auto-renew on to the yearly.
    static let held = NotificationIngestTests.monthly
    /// What the row comes to: the transaction's period, billing retry (Apple's status 3), the
    /// renewal columns Apple did not resend kept.
    static let inBillingRetry = SubscriptionState(
        originalTransactionID: "1000000100", productID: "com.example.premium.monthly", environment: "Production", expiresAt: 1_791_600_000_000,
        isInBillingRetry: true, autoRenewStatus: true, autoRenewProductID: "com.example.premium.yearly", transactionID: "1000000123",
        purchasedAt: 1_789_000_000_000)

    /// A minute after the period's expiry: when Apple tells of the failed renewal.
    static let failedAt: Int64 = 1_791_600_060_000

    /// A DID_FAIL_TO_RENEW of status 3, signed a minute after the period ended, whose renewal info
    /// is the literal `null`, signed.
    static func failedToRenew(_ pki: TestPKI, uuid: String) -> String {
        let data = Make.data(pki, renewal: nil, changes: ["status": 3, "signedRenewalInfo": pki.sign(text: "null")])
        return Make.outer(pki, type: "DID_FAIL_TO_RENEW", data: data, changes: ["notificationUUID": uuid, "signedDate": failedAt])
    }

    @Test func serverAPIStatusWithNullRenewalInfoApplies() async throws {
        let answers = ServerAPIAnswers(pki: try TestPKI())
        var entry = answers.lastTransaction("1000000100", status: 3)
        entry["signedRenewalInfo"] = answers.pki.sign(text: "null")
        let logs = InMemoryLogHandler()
        let row = SubscriptionRow(id: 7, userID: "user-7", latestReceipt: "R", state: Self.held)
        let lookup = try await ScriptedServerAPI.withServer { server, production, sandbox in
            await server.script("1000000100", [.json(answers.statuses([entry]))])
            return try await ServerAPIClient.withClient(try answers.configuration(production: production, sandbox: sandbox), jitter: { 0 }) { client in
                try await client.status(of: row, logger: Logger(label: "test", factory: { _ in logs }))
            }
        }
        let answer = try ServerAPIClientTests.answer(lookup)
        #expect(answer.renewals == [])
        #expect(answer.missingRenewals == [MissingRenewalInfo(originalTransactionID: "1000000100", appleStatus: .billingRetry)])
        #expect(EntitlementDecision.decide(answer: answer, row: row, bundleID: Kit.bundle) == .adopt(Self.inBillingRetry, latestReceipt: nil))
        let line = try #require(logs.entries.first { $0.message.description.hasPrefix("Apple answered a chain without renewal info") })
        #expect(line.metadata["renewal_info"] == "signed as null or {}")
        #expect(line.metadata["apple_status"] == "3")
        #expect(line.metadata["original_transaction_id"] == "1000000100")
    }

    /// Apple's status says what the missing renewal info would have: active clears billing retry
    /// and grace; a grace period keeps the row's grace expiry; no status keeps the row's columns.
    @Test func appleStatusSetsWhatItSaysWithoutRenewalInfo() {
        var held = Self.held
        held.isInBillingRetry = true
        held.gracePeriodExpiresAt = 1_791_700_000_000
        held.expirationIntent = 2
        func state(_ status: AppleSubscriptionStatus?, held: SubscriptionState?) -> SubscriptionState {
            var state = SubscriptionState(originalTransactionID: "1000000100", expiresAt: 1_791_600_000_000)
            state.takeRenewalInfo(withoutRenewalInfo: status, held: held)
            return state
        }
        #expect(state(.active, held: held) == SubscriptionState(
            originalTransactionID: "1000000100", expiresAt: 1_791_600_000_000, autoRenewStatus: true, autoRenewProductID: "com.example.premium.yearly", expirationIntent: 2))
        #expect(state(.gracePeriod, held: held) == SubscriptionState(
            originalTransactionID: "1000000100", expiresAt: 1_791_600_000_000, gracePeriodExpiresAt: 1_791_700_000_000, isInBillingRetry: true,
            autoRenewStatus: true, autoRenewProductID: "com.example.premium.yearly", expirationIntent: 2))
        #expect(state(.billingRetry, held: nil) == SubscriptionState(originalTransactionID: "1000000100", expiresAt: 1_791_600_000_000, isInBillingRetry: true))
        #expect(state(nil, held: held).gracePeriodExpiresAt == 1_791_700_000_000)
        #expect(state(nil, held: held).isInBillingRetry)
    }

    @Test(arguments: StoreKind.available) func aPushedNotificationWithNullRenewalInfoApplies(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let id = try await db.insert(userID: "u", receipt: "R", Self.held)
            let logs = InMemoryLogHandler()
            let receiver = NotificationReceiver(
                .init(bundleID: Kit.bundle, appAppleID: Make.appAppleID, trustedRoots: [pki.root]), inbox: db.store,
                logger: Logger(label: "test", factory: { _ in logs }), clock: { Self.failedAt + 1_000 })
            let body = Array(#"{"signedPayload":"\#(Self.failedToRenew(pki, uuid: "n-null"))"}"#.utf8)
            #expect(await receiver.receive(body) == .accepted(.applied, version: 2, type: "DID_FAIL_TO_RENEW"))
            #expect(try await db.store.subscription(id: id)?.state == Self.inBillingRetry)
            let line = try #require(logs.entries.first { $0.message.description.hasPrefix("a notification without renewal info") })
            #expect(line.metadata["notification_id"] == "n-null")
            #expect(line.metadata["apple_status"] == "3")
            // Apple's status agrees with what the row came to.
            #expect(try await db.store.notifications(NotificationQuery()).map(\.statusAgrees) == [true])
        }
    }

    @Test(arguments: StoreKind.available) func aHistoryRecordWithNullRenewalInfoApplies(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let answers = ServerAPIAnswers(pki: pki)
            let id = try await db.insert(userID: "u", receipt: "R", Self.held)
            var quiet = Logger(label: "catch-up")
            quiet.logLevel = .critical
            let receiver = NotificationReceiver(
                .init(bundleID: Kit.bundle, appAppleID: Make.appAppleID, trustedRoots: [pki.root]), inbox: db.store, logger: quiet,
                clock: { Self.failedAt + 1_000 })
            let record = Self.failedToRenew(pki, uuid: "h-null")
            let router = Router()
            router.post("inApps/v1/notifications/history") { _, _ -> Response in
                let answer: [String: Any] = ["notificationHistory": [["signedPayload": record, "sendAttempts": [] as [Any]]], "hasMore": false]
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: try JSONSerialization.data(withJSONObject: answer))))
            }
            try await withLoopbackServer(router) { port in
                let configuration = try answers.configuration(production: "http://127.0.0.1:\(port)", sandbox: "http://127.0.0.1:\(port)/sandbox", attempts: 2)
                try await ServerAPIClient.withClient(configuration) { client in
                    let report = try await NotificationCatchUp(client: client, receiver: receiver, inbox: db.store).run(.production, nowMs: Self.failedAt + 1_000, logger: quiet)
                    #expect(report.outcomes == [.applied: 1])
                }
            }
            #expect(try await db.store.subscription(id: id)?.state == Self.inBillingRetry)
            #expect(try await db.store.notifications(NotificationQuery()).map { "\($0.id):\($0.source)" } == ["h-null:history"])
        }
    }

    /// A notification Apple signed whose payload is not of Apple's shape is refused as malformed,
    /// not as an untrusted signature.
    @Test func aNotificationOfTheWrongShapeIsMalformed() async throws {
        try await withStore(.sqlite) { db in
            let pki = try TestPKI()
            let receiver = NotificationReceiver(
                .init(bundleID: Kit.bundle, appAppleID: Make.appAppleID, trustedRoots: [pki.root]), inbox: db.store, logger: Logger(label: "test"))
            let wrong = Make.outer(pki, data: Make.data(pki), changes: ["signedDate": "yesterday"])
            #expect(await receiver.receive(Array(#"{"signedPayload":"\#(wrong)"}"#.utf8)) == .refused(NotificationRefusal(
                .malformed, "payload_shape: the signature holds, but the payload is not JSON of the shape Apple documents for NotificationPayload")))
            #expect(try await db.store.notifications(NotificationQuery()).isEmpty)
        }
    }
}
