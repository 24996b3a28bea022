import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Every notificationType and subtype of Apple's current list (App Store Server Notifications V2,
/// through the April 2026 changelog and Apple's libraries' enums), each a `signedPayload` minted by
/// Scripts/conformance/mint.sh with the test chain of Apple's Java library and checked there with
/// Apple's own Python verifier. Each must verify through ours under testCA.der — the outer payload
/// and its transaction and renewal info — and decode exactly; a type we do not apply (a summary, an
/// external purchase token, a consent change) is stored, never refused.
@Suite struct AppleNotificationCorpusTests {
    typealias Apple = AppleConformance

    static let firstSignedDate: Int64 = 1_777_593_600_000  // 2026-05-01T00:00:00Z
    static let chain = "2000000912345678"
    static let monthly = "com.example.premium.monthly", yearly = "com.example.premium.yearly", basic = "com.example.basic.monthly"
    static let plan = "com.example.ac.plan"

    /// What a minted notification carries.
    enum Carries: Sendable {
        /// `data` with a subscription's transaction and renewal info.
        case subscription(status: Int, renewsTo: String, autoRenew: Int = 1, intent: Int? = nil)
        /// `data` with a one-time purchase's transaction, no renewal info, no status.
        case oneTimePurchase
        /// `data` naming the app and environment only (TEST).
        case appOnly
        /// `summary`, `externalPurchaseToken` or `appData` instead of `data`.
        case noData
    }

    struct Case: Sendable, CustomStringConvertible {
        var number: Int
        var type: String
        var subtype: String?
        var environment: AppStoreEnvironment = .production
        var carries: Carries

        var file: String { subtype.map { "\(type)-\($0)" } ?? type }
        /// How the trail names it.
        var name: String { subtype.map { "\(type)/\($0)" } ?? type }
        var uuid: String { "a3c1d1e0-5f6b-4c1e-9d2a-" + String(repeating: "0", count: 12 - String(number).count) + String(number) }
        var signedDate: Int64 { AppleNotificationCorpusTests.firstSignedDate + Int64(number) * 60_000 }
        /// The first purchase's transaction is the chain's own id; the others are numbered.
        var transactionID: String { number == 1 ? AppleNotificationCorpusTests.chain : String(2_000_000_912_345_700 + number) }
        var description: String { file }
    }

    static let cases: [Case] = [
        Case(number: 1, type: "SUBSCRIBED", subtype: "INITIAL_BUY", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 2, type: "SUBSCRIBED", subtype: "RESUBSCRIBE", environment: .sandbox, carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 3, type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", carries: .subscription(status: 1, renewsTo: yearly)),
        Case(number: 4, type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", carries: .subscription(status: 1, renewsTo: basic)),
        Case(number: 5, type: "DID_CHANGE_RENEWAL_PREF", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 6, type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 7, type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", carries: .subscription(status: 1, renewsTo: monthly, autoRenew: 0)),
        Case(number: 8, type: "OFFER_REDEEMED", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 9, type: "OFFER_REDEEMED", subtype: "UPGRADE", carries: .subscription(status: 1, renewsTo: yearly)),
        Case(number: 10, type: "OFFER_REDEEMED", subtype: "DOWNGRADE", carries: .subscription(status: 1, renewsTo: basic)),
        Case(number: 11, type: "DID_RENEW", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 12, type: "DID_RENEW", subtype: "BILLING_RECOVERY", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 13, type: "EXPIRED", subtype: "VOLUNTARY", carries: .subscription(status: 2, renewsTo: monthly, autoRenew: 0, intent: 1)),
        Case(number: 14, type: "EXPIRED", subtype: "BILLING_RETRY", carries: .subscription(status: 2, renewsTo: monthly, autoRenew: 0, intent: 2)),
        Case(number: 15, type: "EXPIRED", subtype: "PRICE_INCREASE", carries: .subscription(status: 2, renewsTo: monthly, autoRenew: 0, intent: 3)),
        Case(number: 16, type: "EXPIRED", subtype: "PRODUCT_NOT_FOR_SALE", carries: .subscription(status: 2, renewsTo: monthly, autoRenew: 0, intent: 4)),
        Case(number: 17, type: "EXPIRED", carries: .subscription(status: 2, renewsTo: monthly, autoRenew: 0, intent: 5)),
        Case(number: 18, type: "DID_FAIL_TO_RENEW", carries: .subscription(status: 3, renewsTo: monthly, intent: 2)),
        Case(number: 19, type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", carries: .subscription(status: 4, renewsTo: monthly, intent: 2)),
        Case(number: 20, type: "GRACE_PERIOD_EXPIRED", carries: .subscription(status: 3, renewsTo: monthly, intent: 2)),
        Case(number: 21, type: "PRICE_INCREASE", subtype: "PENDING", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 22, type: "PRICE_INCREASE", subtype: "ACCEPTED", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 23, type: "REFUND", carries: .subscription(status: 5, renewsTo: monthly, autoRenew: 0)),
        Case(number: 24, type: "REFUND_DECLINED", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 25, type: "REFUND_REVERSED", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 26, type: "CONSUMPTION_REQUEST", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 27, type: "RENEWAL_EXTENDED", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 28, type: "RENEWAL_EXTENSION", subtype: "SUMMARY", carries: .noData),
        Case(number: 29, type: "RENEWAL_EXTENSION", subtype: "FAILURE", carries: .subscription(status: 1, renewsTo: monthly)),
        Case(number: 30, type: "REVOKE", carries: .subscription(status: 5, renewsTo: monthly)),
        Case(number: 31, type: "TEST", environment: .sandbox, carries: .appOnly),
        Case(number: 32, type: "EXTERNAL_PURCHASE_TOKEN", subtype: "UNREPORTED", carries: .noData),
        Case(number: 33, type: "EXTERNAL_PURCHASE_TOKEN", subtype: "CREATED", carries: .noData),
        Case(number: 34, type: "EXTERNAL_PURCHASE_TOKEN", subtype: "ACTIVE_TOKEN_REMINDER", carries: .noData),
        Case(number: 35, type: "ONE_TIME_CHARGE", carries: .oneTimePurchase),
        Case(number: 36, type: "RESCIND_CONSENT", carries: .noData),
        Case(number: 37, type: "METADATA_UPDATE", carries: .subscription(status: 1, renewsTo: plan)),
        Case(number: 38, type: "MIGRATION", carries: .subscription(status: 1, renewsTo: plan)),
        Case(number: 39, type: "PRICE_CHANGE", carries: .subscription(status: 1, renewsTo: plan)),
    ]

    /// Apple's current notificationType and subtype values (Apple's libraries' NotificationTypeV2 and
    /// Subtype enums, 2026, and the subtype page's ACTIVE_TOKEN_REMINDER and CREATED of June 2025).
    static let appleTypes: Set<String> = [
        "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW", "EXPIRED", "DID_FAIL_TO_RENEW",
        "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED", "CONSUMPTION_REQUEST", "RENEWAL_EXTENDED", "REVOKE", "TEST",
        "RENEWAL_EXTENSION", "REFUND_REVERSED", "EXTERNAL_PURCHASE_TOKEN", "ONE_TIME_CHARGE", "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION",
        "PRICE_CHANGE",
    ]
    static let appleSubtypes: Set<String> = [
        "INITIAL_BUY", "RESUBSCRIBE", "DOWNGRADE", "UPGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED", "VOLUNTARY", "BILLING_RETRY",
        "PRICE_INCREASE", "GRACE_PERIOD", "PENDING", "ACCEPTED", "BILLING_RECOVERY", "PRODUCT_NOT_FOR_SALE", "SUMMARY", "FAILURE", "UNREPORTED",
        "ACTIVE_TOKEN_REMINDER", "CREATED",
    ]

    @Test func theCorpusCoversAppleListAndEveryFileIsTested() throws {
        #expect(Set(Self.cases.map(\.type)) == Self.appleTypes)
        #expect(Set(Self.cases.compactMap(\.subtype)) == Self.appleSubtypes)
        let folder = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures/apple-conformance/notifications")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }
        #expect(Set(files) == Set(Self.cases.map(\.file) + Self.refusals.map(\.file)))
    }

    @Test(arguments: cases) func verifiesAndDecodesExactly(_ c: Case) async throws {
        let notification = try await Apple.verify(c.file).get()
        #expect(notification.notificationUUID == c.uuid)
        #expect(notification.type == c.type)
        #expect(notification.subtype == c.subtype)
        #expect(notification.signedDateMs == c.signedDate)
        let received = ReceivedNotification(notification, signedPayload: "", source: .push, receivedAtMs: c.signedDate)
        #expect(received.id == c.uuid && received.name == c.name && received.appleStateAtMs == c.signedDate)
        switch c.carries {
        case .subscription(let status, let renewsTo, let autoRenew, let intent):
            #expect(notification.environment == c.environment)
            #expect(notification.status == status)
            let transaction = try #require(notification.transaction)
            #expect(transaction.transactionId == c.transactionID)
            #expect(transaction.originalTransactionId == Self.chain)
            #expect(transaction.bundleId == Apple.bundleID)
            #expect(transaction.environment == c.environment.rawValue)
            #expect(transaction.signedDate == c.signedDate)
            #expect(transaction.type == "Auto-Renewable Subscription")
            let renewal = try #require(notification.renewal)
            #expect(renewal.originalTransactionId == Self.chain)
            #expect(renewal.autoRenewProductId == renewsTo)
            #expect(renewal.autoRenewStatus == autoRenew)
            #expect(renewal.expirationIntent == intent)
            #expect(notification.originalTransactionID == Self.chain)
            #expect(received.answer?.upstreamStatus == UpstreamStatus(backend: .notification, code: status))
        case .oneTimePurchase:
            #expect(notification.environment == c.environment)
            #expect(notification.status == nil)
            let transaction = try #require(notification.transaction)
            #expect(transaction.transactionId == c.transactionID && transaction.originalTransactionId == c.transactionID)
            #expect(transaction.type == "Consumable" && transaction.productId == "com.example.coins.500" && transaction.expiresDate == nil)
            #expect(notification.renewal == nil)
        case .appOnly:
            #expect(notification.environment == c.environment)
            #expect(notification.status == nil && notification.transaction == nil && received.answer == nil)
        case .noData:
            #expect(notification.environment == nil)
            #expect(notification.status == nil && notification.transaction == nil && notification.renewal == nil && received.answer == nil)
        }
    }

    /// Fields particular to some types, decoded from their signed transaction and renewal info.
    @Test func typeSpecificFieldsDecode() async throws {
        let refund = try await Apple.verify("REFUND").get()
        #expect(refund.transaction?.revocationDate == Self.firstSignedDate - 60_000)
        #expect(refund.transaction?.revocationReason == 0)
        let revoke = try await Apple.verify("REVOKE").get()
        #expect(revoke.transaction?.inAppOwnershipType == "FAMILY_SHARED")
        #expect(revoke.transaction?.revocationDate == Self.firstSignedDate - 60_000)
        let grace = try await Apple.verify("DID_FAIL_TO_RENEW-GRACE_PERIOD").get()
        #expect(grace.renewal?.isInBillingRetryPeriod == true)
        #expect(grace.renewal?.gracePeriodExpiresDate == Self.firstSignedDate + 16 * 86_400_000)
        let upgrade = try await Apple.verify("DID_CHANGE_RENEWAL_PREF-UPGRADE").get()
        #expect(upgrade.transaction?.productId == Self.yearly && upgrade.transaction?.transactionReason == "PURCHASE")
        let extended = try await Apple.verify("RENEWAL_EXTENDED").get()
        #expect(extended.transaction?.expiresDate == Self.firstSignedDate + 33 * 86_400_000)
    }

    /// A minted notification Apple's verifier refuses, and the check ours refuses it with.
    struct Refusal: Sendable, CustomStringConvertible {
        var file: String
        var failure: SignedDataFailure
        var description: String { file }
    }

    static let refusals: [Refusal] = [
        // testInvalidOIDLeaf: Apple's marker 1.2.840.113635.100.6.11.2 instead of .11.1.
        Refusal(file: "refused-invalid-leaf-oid", failure: SignedDataFailure(.leafOID, "the leaf lacks extension 1.2.840.113635.100.6.11.1")),
        // testInvalidOIDIntermediate: 1.2.840.113635.100.6.2.2 instead of .2.1.
        Refusal(file: "refused-invalid-intermediate-oid", failure: SignedDataFailure(.intermediateOID, "the intermediate lacks extension 1.2.840.113635.100.6.2.1")),
        // A good outer payload whose signedTransactionInfo is signed by the invalid leaf.
        Refusal(file: "refused-nested-invalid-leaf-oid", failure: SignedDataFailure(.leafOID, "the leaf lacks extension 1.2.840.113635.100.6.11.1")),
        // Signed 2034-01-01, after the test chain expired (2033): not valid at its signedDate.
        Refusal(file: "refused-signed-after-expiry", failure: SignedDataFailure(
            .validity, "a certificate of the chain was not valid at signedDate 2019686400000 ms (valid 1672954294000…1988227865000 ms)")),
    ]

    @Test(arguments: refusals) func isRefusedWithTheCheckAppleRefusesItFor(_ refusal: Refusal) async throws {
        let result = try await Apple.verify(refusal.file)
        #expect(throws: refusal.failure) { try result.get() }
    }

    /// The same corpus under Apple Root CA - G3 instead of testCA.der: every file refused for its root.
    @Test func underThePinnedAppleRootEveryNotificationIsRefused() async throws {
        for c in Self.cases {
            let result = try await Apple.verify(c.file, roots: AppleRootCertificate.defaultRoots)
            #expect(throws: SignedDataFailure(.untrustedRoot, "the chain's root is not a trusted root (L=Cupertino,ST=California,C=US)"), "\(c)") {
                try result.get()
            }
        }
    }
}
