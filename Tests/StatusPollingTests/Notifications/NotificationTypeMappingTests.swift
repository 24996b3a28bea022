import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Every notification type and subtype of Apple's reference (`../shared/reference/notifications.md`
/// §1.3), and seed 004's V1 types, received on every store: the exact contract columns each leaves
/// on the row owning its chain. The columns follow the signed data, never the type's name: a type
/// Apple adds next year changes a row exactly as its data says.
@Suite struct NotificationTypeMappingTests {
    typealias Kit = SignedPayloads
    typealias Make = NotificationVerificationTests

    static let bought: Int64 = 1_787_000_000_000
    static let expires: Int64 = 1_789_600_000_000
    static let renewedUntil: Int64 = 1_792_200_000_000
    static let grace: Int64 = 1_791_000_000_000
    static let refunded: Int64 = 1_788_000_000_000

    /// The row before each notification: an active monthly subscription set to renew.
    static func before(_ chain: String) -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: chain, productID: "com.example.premium.monthly", environment: "Production", expiresAt: expires,
            autoRenewStatus: true, autoRenewProductID: "com.example.premium.monthly")
    }

    /// A row that knows its period (verified since transaction ids are kept): bought 30 days
    /// before `expires`.
    @Sendable static func holdingCurrentPeriod(_ chain: String) -> SubscriptionState {
        var s = before(chain)
        s.transactionID = "current-1"
        s.purchasedAt = expires - 2_592_000_000
        s.ownershipType = "PURCHASED"
        return s
    }

    /// The period before the row's: over for three days when the messages about it are signed.
    static let earlierPeriod: [String: any Sendable] = [
        "transactionId": "earlier-1", "purchaseDate": expires - 2 * 2_592_000_000, "expiresDate": expires - 2_592_000_000,
    ]

    struct Case: Sendable, CustomStringConvertible {
        var type: String
        var subtype: String?
        /// Changes to the signed transaction and renewal info; nil data: a notification with none.
        var transaction: [String: any Sendable]? = [:]
        var renewal: [String: any Sendable] = [:]
        var status = 1
        /// The row before, when not ``before(_:)``.
        var rowBefore: (@Sendable (String) -> SubscriptionState)?
        var outcome: NotificationOutcome
        /// The row takes the message's transaction as its own (its id and purchase date): every
        /// case but a message about another period than the row's.
        var takesTransaction = true
        /// The reasons of the audit rows it writes, when not the transition alone.
        var trail: [String]? = nil
        var after: @Sendable (inout SubscriptionState) -> Void = { _ in }

        var description: String { subtype.map { "\(type)/\($0)" } ?? type }
    }

    static let cases: [Case] = [
        Case(type: "SUBSCRIBED", subtype: "INITIAL_BUY", rowBefore: { SubscriptionState(originalTransactionID: $0) }, outcome: .applied) { s in
            s = before(s.originalTransactionID!)
        },
        Case(type: "SUBSCRIBED", subtype: "RESUBSCRIBE", transaction: ["purchaseDate": renewedUntil - 2_592_000_000, "expiresDate": renewedUntil],
             rowBefore: { var s = before($0); s.expiresAt = refunded; s.autoRenewStatus = false; s.expirationIntent = 1; return s }, outcome: .applied) { s in
            s.expiresAt = renewedUntil
            s.autoRenewStatus = true
            s.expirationIntent = nil
        },
        Case(type: "DID_RENEW", transaction: ["expiresDate": renewedUntil], outcome: .applied) { $0.expiresAt = renewedUntil },
        Case(type: "DID_RENEW", subtype: "BILLING_RECOVERY", transaction: ["expiresDate": renewedUntil],
             rowBefore: { var s = before($0); s.isInBillingRetry = true; return s }, outcome: .applied) { s in
            s.expiresAt = renewedUntil
            s.isInBillingRetry = false
        },
        Case(type: "DID_FAIL_TO_RENEW", renewal: ["isInBillingRetryPeriod": true], status: 3, outcome: .applied) { $0.isInBillingRetry = true },
        Case(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", renewal: ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": grace], status: 4,
             outcome: .applied) { s in
            s.isInBillingRetry = true
            s.gracePeriodExpiresAt = grace
        },
        Case(type: "GRACE_PERIOD_EXPIRED", renewal: ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": grace], status: 3,
             rowBefore: { var s = before($0); s.isInBillingRetry = true; s.gracePeriodExpiresAt = grace; return s }, outcome: .unchanged),
        Case(type: "EXPIRED", subtype: "VOLUNTARY", renewal: ["autoRenewStatus": 0, "expirationIntent": 1], status: 2, outcome: .applied) { s in
            s.autoRenewStatus = false
            s.expirationIntent = 1
        },
        Case(type: "EXPIRED", subtype: "BILLING_RETRY", renewal: ["autoRenewStatus": 0, "expirationIntent": 2, "isInBillingRetryPeriod": false], status: 2,
             rowBefore: { var s = before($0); s.isInBillingRetry = true; return s }, outcome: .applied) { s in
            s.isInBillingRetry = false
            s.autoRenewStatus = false
            s.expirationIntent = 2
        },
        Case(type: "EXPIRED", subtype: "PRICE_INCREASE", renewal: ["autoRenewStatus": 0, "expirationIntent": 3], status: 2, outcome: .applied) { s in
            s.autoRenewStatus = false
            s.expirationIntent = 3
        },
        Case(type: "EXPIRED", subtype: "PRODUCT_NOT_FOR_SALE", renewal: ["autoRenewStatus": 0, "expirationIntent": 4], status: 2, outcome: .applied) { s in
            s.autoRenewStatus = false
            s.expirationIntent = 4
        },
        Case(type: "EXPIRED", renewal: ["autoRenewStatus": 0, "expirationIntent": 5], status: 2, outcome: .applied) { s in
            s.autoRenewStatus = false
            s.expirationIntent = 5
        },
        Case(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", renewal: ["autoRenewStatus": 0], outcome: .applied) { $0.autoRenewStatus = false },
        Case(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED",
             rowBefore: { var s = before($0); s.autoRenewStatus = false; return s }, outcome: .applied) { $0.autoRenewStatus = true },
        Case(type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE",
             transaction: ["productId": "com.example.premium.yearly", "purchaseDate": expires - 1_000_000, "expiresDate": expires + 31_536_000_000],
             renewal: ["productId": "com.example.premium.yearly", "autoRenewProductId": "com.example.premium.yearly"], outcome: .applied) { s in
            s.productID = "com.example.premium.yearly"
            s.expiresAt = expires + 31_536_000_000
            s.autoRenewProductID = "com.example.premium.yearly"
        },
        Case(type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", renewal: ["autoRenewProductId": "com.example.premium.basic"], outcome: .applied) { s in
            s.autoRenewProductID = "com.example.premium.basic"
        },
        Case(type: "DID_CHANGE_RENEWAL_PREF",
             rowBefore: { var s = before($0); s.autoRenewProductID = "com.example.premium.basic"; return s }, outcome: .applied) { s in
            s.autoRenewProductID = "com.example.premium.monthly"
        },
        Case(type: "OFFER_REDEEMED", subtype: "DOWNGRADE", renewal: ["autoRenewProductId": "com.example.premium.basic"], outcome: .applied) { s in
            s.autoRenewProductID = "com.example.premium.basic"
        },
        Case(type: "PRICE_INCREASE", subtype: "PENDING", outcome: .unchanged),
        Case(type: "PRICE_INCREASE", subtype: "ACCEPTED", outcome: .unchanged),
        Case(type: "REFUND", transaction: ["revocationDate": refunded, "revocationReason": 0], status: 5, outcome: .applied) { $0.cancelledAt = refunded },
        Case(type: "REFUND_DECLINED", outcome: .unchanged),
        Case(type: "REFUND_REVERSED", rowBefore: { var s = before($0); s.cancelledAt = refunded; return s }, outcome: .applied) { $0.cancelledAt = nil },
        Case(type: "REVOKE", transaction: ["revocationDate": refunded], status: 5, outcome: .applied) { $0.cancelledAt = refunded },
        Case(type: "CONSUMPTION_REQUEST", outcome: .unchanged),
        Case(type: "RENEWAL_EXTENDED", transaction: ["expiresDate": expires + 604_800_000], outcome: .applied) { $0.expiresAt = expires + 604_800_000 },
        Case(type: "RENEWAL_EXTENSION", subtype: "FAILURE", outcome: .unchanged),
        Case(type: "RENEWAL_EXTENSION", subtype: "SUMMARY", transaction: nil, outcome: .ignored),
        Case(type: "TEST", transaction: nil, outcome: .ignored),
        Case(type: "RESCIND_CONSENT", transaction: nil, outcome: .ignored),
        // A message about another period than the row's (genuine Apple traffic): the refund request
        // and the refund of last month while this month is paid for, its reversal, and an upgrade
        // from a yearly plan to a monthly one that expires sooner.
        Case(type: "CONSUMPTION_REQUEST", transaction: earlierPeriod, rowBefore: holdingCurrentPeriod, outcome: .unchanged, takesTransaction: false, trail: []),
        Case(type: "REFUND", transaction: earlierPeriod.merging(["revocationDate": refunded, "revocationReason": 0]) { $1 }, rowBefore: holdingCurrentPeriod,
             outcome: .unchanged, takesTransaction: false, trail: ["refunded_earlier_period"]),
        Case(type: "REFUND_REVERSED", transaction: earlierPeriod, rowBefore: holdingCurrentPeriod, outcome: .unchanged, takesTransaction: false,
             trail: ["refund_reversed_earlier_period"]),
        Case(type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE",
             transaction: ["transactionId": "upgraded-1", "productId": "com.example.premium.pro", "purchaseDate": expires - 20 * 86_400_000, "expiresDate": expires + 10 * 86_400_000],
             renewal: ["productId": "com.example.premium.pro", "autoRenewProductId": "com.example.premium.pro"],
             rowBefore: { var s = holdingCurrentPeriod($0); s.productID = "com.example.basic.yearly"; s.expiresAt = expires + 300 * 86_400_000; return s },
             outcome: .applied) { s in
            s.productID = "com.example.premium.pro"
            s.expiresAt = expires + 10 * 86_400_000
            s.autoRenewProductID = "com.example.premium.pro"
        },
        // Monthly billing with a 12-month commitment (App Store Server API 1.21): the third of twelve
        // monthly payments, renewing on the same plan.
        Case(type: "DID_RENEW", transaction: [
                "expiresDate": renewedUntil, "billingPlanType": "MONTHLY",
                "commitmentInfo": ["billingPeriodNumber": 3, "totalBillingPeriods": 12, "commitmentExpiresDate": renewedUntil + 270 * 86_400_000,
                                   "commitmentPrice": 119_880] as [String: any Sendable],
             ], renewal: ["renewalBillingPlanType": "MONTHLY"], outcome: .applied) { s in
            s.expiresAt = renewedUntil
            s.billingPlanType = "MONTHLY"
            s.commitmentPeriod = 3
            s.commitmentPeriods = 12
            s.commitmentExpiresAt = renewedUntil + 270 * 86_400_000
            s.renewalBillingPlanType = "MONTHLY"
        },
        // A type Apple adds later: stored, and applied as its data says.
        Case(type: "SOMETHING_NEW_IN_2027", subtype: "WHATEVER", transaction: ["expiresDate": renewedUntil], outcome: .applied) { $0.expiresAt = renewedUntil },
    ]

    static func notification(_ pki: TestPKI, _ c: Case, chain: String, uuid: String) async throws -> ReceivedNotification {
        var data: [String: Any]?
        if let changes = c.transaction {
            var transaction = Kit.transaction(["originalTransactionId": chain, "purchaseDate": bought, "expiresDate": expires])
            for (key, value) in changes { transaction[key] = value }
            var renewal = Kit.renewal(["originalTransactionId": chain, "autoRenewProductId": "com.example.premium.monthly"])
            for (key, value) in c.renewal { renewal[key] = value }
            data = Make.data(pki, transaction: transaction, renewal: renewal, changes: ["status": c.status])
        }
        let jws = Make.outer(pki, type: c.type, subtype: c.subtype, data: data, changes: ["notificationUUID": uuid])
        let verified = try await SignedDataVerifier(trustedRoots: [pki.root], bundleID: Kit.bundle).verifyNotification(jws, appAppleID: Make.appAppleID)
        return ReceivedNotification(verified, signedPayload: jws, source: .push, receivedAtMs: Kit.signedDate + 10)
    }

    @Test(arguments: StoreKind.available) func everyTypeAndSubtypeLeavesTheColumnsItsDataSays(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let ingest = NotificationIngest(bundleID: Kit.bundle)
            for (index, c) in Self.cases.enumerated() {
                let chain = "2000000\(100 + index)"
                let before = c.rowBefore?(chain) ?? Self.before(chain)
                let id = try await db.insert(userID: "user-\(index)", receipt: "R", before)
                let n = try await Self.notification(pki, c, chain: chain, uuid: "type-\(index)")
                let outcome = try await db.store.receive([n], ingest: ingest, nowMs: Kit.signedDate + 20)
                #expect(outcome == [c.outcome], "\(c)")
                var expected = before
                c.after(&expected)
                if let changes = c.transaction, c.takesTransaction {
                    expected.transactionID = changes["transactionId"] as? String ?? "1000000123"
                    expected.purchasedAt = changes["purchaseDate"] as? Int64 ?? Self.bought
                    expected.ownershipType = nil  // the test transactions carry no inAppOwnershipType
                }
                #expect(try await db.store.subscription(id: id)?.state == expected, "\(c)")
                if let trail = c.trail {
                    #expect(try await db.store.history(userID: "user-\(index)").map(\.reason) == trail, "\(c)")
                }
                let stored = try await db.store.notifications(NotificationQuery(userID: c.transaction == nil ? nil : "user-\(index)", limit: 1000))
                #expect(stored.first { $0.id == "type-\(index)" }?.name == c.description, "\(c)")
            }
        }
    }

    /// Seed 004's V1 body: the receipt data at the top (`latest_receipt`, a single
    /// `latest_receipt_info`), the renewal state in `auto_renew_status` and friends.
    static func seed004(type: String, info: [String: String], autoRenew: String = "true", intent: String? = nil, receipt: String = "R-latest") -> [UInt8] {
        var body: [String: Any] = [
            "notification_type": type, "password": "secret", "environment": "PROD", "bid": Kit.bundle,
            "latest_receipt": receipt, "latest_receipt_info": info, "auto_renew_status": autoRenew,
            "auto_renew_product_id": "com.example.premium.monthly", "original_transaction_id": info["original_transaction_id"]!,
        ]
        if let intent { body["expiration_intent"] = intent }
        return Array(try! JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
    }

    static func info(_ chain: String, expires: Int64, cancelled: Int64? = nil, product: String = "com.example.premium.monthly") -> [String: String] {
        var info = [
            "original_transaction_id": chain, "transaction_id": "\(chain)9", "product_id": product,
            "purchase_date_ms": "\(expires - 2_592_000_000)", "expires_date_ms": "\(expires)",
        ]
        if let cancelled { info["cancellation_date_ms"] = "\(cancelled)" }
        return info
    }

    @Test(arguments: StoreKind.available) func seed004sVersion1TypesLeaveTheColumnsTheirReceiptDataSays(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let ingest = NotificationIngest(bundleID: Kit.bundle)
            let received = Self.expires + 1_000_000_000
            let cases: [(type: String, body: (String) -> [UInt8], after: (inout SubscriptionState) -> Void)] = [
                ("INITIAL_BUY", { Self.seed004(type: "INITIAL_BUY", info: Self.info($0, expires: Self.expires)) }, { _ in }),
                ("RENEWAL", { Self.seed004(type: "RENEWAL", info: Self.info($0, expires: Self.renewedUntil)) }, { $0.expiresAt = Self.renewedUntil }),
                ("INTERACTIVE_RENEWAL", { Self.seed004(type: "INTERACTIVE_RENEWAL", info: Self.info($0, expires: Self.renewedUntil, product: "com.example.premium.yearly")) },
                 { $0.expiresAt = Self.renewedUntil; $0.productID = "com.example.premium.yearly" }),
                ("DID_RECOVER", { Self.seed004(type: "DID_RECOVER", info: Self.info($0, expires: Self.renewedUntil)) }, { $0.expiresAt = Self.renewedUntil }),
                ("CANCEL", { Self.seed004(type: "CANCEL", info: Self.info($0, expires: Self.expires, cancelled: Self.refunded), autoRenew: "false") },
                 { $0.cancelledAt = Self.refunded; $0.autoRenewStatus = false }),
                ("DID_CHANGE_RENEWAL_STATUS", { Self.seed004(type: "DID_CHANGE_RENEWAL_STATUS", info: Self.info($0, expires: Self.expires), autoRenew: "false") },
                 { $0.autoRenewStatus = false }),
                ("DID_CHANGE_RENEWAL_PREF", { Self.seed004(type: "DID_CHANGE_RENEWAL_PREF", info: Self.info($0, expires: Self.expires)) }, { _ in }),
                ("DID_FAIL_TO_RENEW", { Self.seed004(type: "DID_FAIL_TO_RENEW", info: Self.info($0, expires: Self.expires), intent: "2") },
                 { $0.expirationIntent = 2 }),
                ("PRICE_INCREASE_CONSENT", { Self.seed004(type: "PRICE_INCREASE_CONSENT", info: Self.info($0, expires: Self.expires)) }, { _ in }),
            ]
            for (index, c) in cases.enumerated() {
                let chain = "3000000\(100 + index)"
                let before = Self.before(chain)
                let id = try await db.insert(userID: "v1-\(index)", receipt: "R", before)
                let v1 = try NotificationV1(body: c.body(chain))
                #expect(v1.authenticates(with: SharedSecret("secret")))
                let outcome = try await db.store.receive([v1.received(source: .push, receivedAtMs: received)], ingest: ingest, nowMs: received)
                var expected = before
                c.after(&expected)
                #expect(outcome == [expected == before ? .unchanged : .applied], "\(c.type)")
                // The receipt data's transaction is the row's from now on.
                expected.transactionID = "\(chain)9"
                expected.purchasedAt = expected.expiresAt! - 2_592_000_000
                let row = try #require(try await db.store.subscription(id: id))
                #expect(row.state == expected, "\(c.type)")
                #expect(row.latestReceipt == "R-latest", "\(c.type)")
            }
        }
    }
}
