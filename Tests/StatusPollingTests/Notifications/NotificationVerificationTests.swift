import Foundation
import Testing
import X509

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// App Store Server Notifications V2: the outer `signedPayload` and everything nested in it are
/// verified before a field is used; each check fails on its own; the verified data decides a row's
/// columns through the same decision as a poll.
@Suite struct NotificationVerificationTests {
    typealias Kit = SignedPayloads
    static let appAppleID: Int64 = 1_234_567_890

    static func outer(_ pki: TestPKI, type: String = "DID_RENEW", subtype: String? = nil, data: [String: Any]?, changes: [String: Any] = [:]) -> String {
        var payload: [String: Any] = [
            "notificationType": type, "notificationUUID": "6f1c2a9e-0000-4000-8000-000000000001", "signedDate": Kit.signedDate + 5, "version": "2.0",
        ]
        if let subtype { payload["subtype"] = subtype }
        if let data { payload["data"] = data }
        for (key, value) in changes { payload[key] = value }
        return pki.sign(payload)
    }

    static func data(_ pki: TestPKI, environment: String = "Production", transaction: [String: Any]? = Kit.transaction(), renewal: [String: Any]? = Kit.renewal(), changes: [String: Any] = [:]) -> [String: Any] {
        var data: [String: Any] = ["bundleId": Kit.bundle, "environment": environment, "appAppleId": appAppleID, "status": 1]
        if let transaction { data["signedTransactionInfo"] = pki.sign(transaction) }
        if let renewal { data["signedRenewalInfo"] = pki.sign(renewal) }
        for (key, value) in changes { data[key] = value }
        return data
    }

    func verify(_ jws: String, pki: TestPKI, roots: [Certificate]? = nil, appAppleID: Int64? = Self.appAppleID) async throws(SignedDataFailure) -> SignedNotification {
        try await SignedDataVerifier(trustedRoots: roots ?? [pki.root], bundleID: Kit.bundle).verifyNotification(jws, appAppleID: appAppleID)
    }

    func failure(_ jws: String, pki: TestPKI, roots: [Certificate]? = nil, appAppleID: Int64? = Self.appAppleID) async -> SignedDataFailure.Check? {
        do {
            _ = try await verify(jws, pki: pki, roots: roots, appAppleID: appAppleID)
            return nil
        } catch {
            return error.check
        }
    }

    @Test func aRenewalNotificationVerifiesDownToItsTransactionAndDecidesTheRow() async throws {
        let pki = try TestPKI()
        let notification = try await verify(Self.outer(pki, subtype: "BILLING_RECOVERY", data: Self.data(pki)), pki: pki)
        #expect(notification.notificationUUID == "6f1c2a9e-0000-4000-8000-000000000001")
        #expect(notification.name == "DID_RENEW/BILLING_RECOVERY")
        #expect(notification.signedDateMs == Kit.signedDate + 5)
        #expect(notification.environment == .production)
        #expect(notification.status == 1)
        #expect(notification.originalTransactionID == "1000000100")
        #expect(notification.renewal?.autoRenewProductId == "com.example.premium.yearly")
        #expect(ReceivedNotification(notification, signedPayload: "", source: .push, receivedAtMs: 0).provenance == .notification(notificationUUID: "6f1c2a9e-0000-4000-8000-000000000001", type: "DID_RENEW/BILLING_RECOVERY", signedAtMs: Kit.signedDate + 5))
        let answer = try #require(notification.answer)
        #expect(answer.upstreamStatus == UpstreamStatus(backend: .notification, code: 1))
        #expect(answer.latestReceipt == nil)
        let row = SubscriptionRow(id: 1, userID: "u", latestReceipt: "R", state: SubscriptionState(originalTransactionID: "1000000100", environment: "Production"))
        let decided = EntitlementDecision.decide(answer: answer, row: row, bundleID: Kit.bundle, nowMs: Kit.signedDate)
        #expect(decided == .adopt(SubscriptionState(
            originalTransactionID: "1000000100", productID: "com.example.premium.monthly", environment: "Production", expiresAt: 1_791_600_000_000,
            autoRenewStatus: true, autoRenewProductID: "com.example.premium.yearly", transactionID: "1000000123", purchasedAt: 1_789_000_000_000),
            latestReceipt: nil, evidence: ChainEvidence(scope: .oneTransaction, appleStatus: .active)))
    }

    @Test func aSandboxNotificationNeedsNoAppAppleIDAndOneWithoutDataTouchesNoRow() async throws {
        let pki = try TestPKI()
        let sandbox = Self.data(
            pki, transaction: Kit.transaction(["environment": "Sandbox"]), renewal: Kit.renewal(["environment": "Sandbox"]), changes: ["appAppleId": NSNull()])
        #expect(try await verify(Self.outer(pki, data: sandbox.merging(["environment": "Sandbox"]) { $1 }), pki: pki).environment == .sandbox)
        let summary = try await verify(Self.outer(pki, type: "RENEWAL_EXTENSION", subtype: "SUMMARY", data: nil), pki: pki)
        #expect(summary.environment == nil && summary.transaction == nil && summary.answer == nil)
        // A type Apple adds next year is taken, not refused.
        #expect(try await verify(Self.outer(pki, type: "SOMETHING_NEW", data: Self.data(pki)), pki: pki).type == "SOMETHING_NEW")
    }

    @Test func eachDefectIsRefusedByItsOwnCheck() async throws {
        let pki = try TestPKI(), other = try TestPKI(.init(rootName: "Another Root"))
        #expect(await failure(Self.outer(pki, data: Self.data(pki, changes: ["bundleId": "com.other.app"])), pki: pki) == .bundleID)
        #expect(await failure(Self.outer(pki, data: Self.data(pki, changes: ["appAppleId": 42])), pki: pki) == .bundleID)
        #expect(await failure(Self.outer(pki, data: Self.data(pki, changes: ["appAppleId": 42])), pki: pki, appAppleID: nil) == nil)
        #expect(await failure(Self.outer(pki, data: Self.data(pki, environment: "Staging")), pki: pki) == .environment)
        // Sandbox data inside a production notification.
        #expect(await failure(Self.outer(pki, data: Self.data(pki, transaction: Kit.transaction(["environment": "Sandbox"]))), pki: pki) == .environment)
        #expect(await failure(Self.outer(pki, data: Self.data(pki, renewal: Kit.renewal(["originalTransactionId": "999"]))), pki: pki) == .renewalMismatch)
        #expect(await failure(Self.outer(pki, data: Self.data(pki, transaction: nil)), pki: pki) == .renewalMismatch)
        #expect(await failure(Self.outer(pki, data: Self.data(pki), changes: ["notificationUUID": ""]), pki: pki) == .payload)
        // The outer payload changed after signing (another type), the signature kept.
        let parts = Self.outer(pki, data: Self.data(pki)).split(separator: ".").map(String.init)
        let decoded = try #require(ServerAPITestKit.fromBase64URL(parts[1]))
        var forged = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
        forged["notificationType"] = "REFUND"
        let forgedPart = TestPKI.base64URL(try JSONSerialization.data(withJSONObject: forged, options: [.sortedKeys]))
        #expect(await failure("\(parts[0]).\(forgedPart).\(parts[2])", pki: pki) == .signature)
        #expect(await failure(Self.outer(other, data: Self.data(other)), pki: pki) == .untrustedRoot)
        // A nested payload signed by another chain fails even inside a good outer one.
        #expect(await failure(Self.outer(pki, data: Self.data(pki, changes: ["signedTransactionInfo": other.sign(Kit.transaction())])), pki: pki) == .untrustedRoot)
        #expect(await failure("not.a-jws", pki: pki) == .malformed)
    }
}
