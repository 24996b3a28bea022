import AppStoreSimulator
import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Genuine Apple traffic's shape, received on every store: while this month is paid for, the
/// customer asks for last month back (`CONSUMPTION_REQUEST`) and gets it (`REFUND` of the earlier
/// period, `data.status` 1). Replayed in Apple's order and shuffled, the row ends on the current
/// period with access, the trail holds the refund once, and no order locks the customer out for
/// good: a row Apple's status contradicts is marked to be asked.
@Suite struct EarlierPeriodNotificationTests {
    typealias Kit = SignedPayloads
    typealias Make = NotificationVerificationTests

    static let day: Int64 = 86_400_000
    static let start = Kit.signedDate - 40 * day
    static let monthly = "com.example.premium.monthly"

    /// One of the chain's messages: its type, the transaction it carries, when Apple signed it.
    struct Message: Sendable {
        var type: String
        var subtype: String?
        var transactionID: String
        var purchased: Int64
        var expires: Int64
        var revoked: Int64?
        var signed: Int64
        var autoRenew = true
    }

    static let messages: [Message] = [
        Message(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transactionID: "t1", purchased: start, expires: start + 30 * day, signed: start),
        Message(type: "DID_RENEW", transactionID: "t2", purchased: start + 30 * day, expires: start + 60 * day, signed: start + 30 * day),
        Message(type: "CONSUMPTION_REQUEST", transactionID: "t1", purchased: start, expires: start + 30 * day, signed: start + 32 * day),
        Message(type: "REFUND", transactionID: "t1", purchased: start, expires: start + 30 * day, revoked: start + 33 * day, signed: start + 33 * day),
        Message(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", transactionID: "t2", purchased: start + 30 * day,
                expires: start + 60 * day, signed: start + 40 * day, autoRenew: false),
    ]

    /// The truth after every message: the second period, not refunded, auto-renew off.
    static func truth(_ chain: String) -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: chain, productID: monthly, environment: "Production", expiresAt: start + 60 * day, autoRenewStatus: false,
            autoRenewProductID: monthly, transactionID: "t2", purchasedAt: start + 30 * day, ownershipType: "PURCHASED")
    }

    static func received(_ pki: TestPKI, _ m: Message, chain: String, uuid: String) async throws -> ReceivedNotification {
        var transaction = Kit.transaction([
            "originalTransactionId": chain, "transactionId": m.transactionID, "purchaseDate": m.purchased, "expiresDate": m.expires,
            "signedDate": m.signed, "inAppOwnershipType": "PURCHASED",
        ])
        if let revoked = m.revoked {
            transaction["revocationDate"] = revoked
            transaction["revocationReason"] = 0
        }
        let renewal = Kit.renewal([
            "originalTransactionId": chain, "autoRenewProductId": monthly, "autoRenewStatus": m.autoRenew ? 1 : 0, "signedDate": m.signed,
        ])
        // Apple's status as of the message: the current period is active throughout.
        let data = Make.data(pki, transaction: transaction, renewal: renewal, changes: ["status": 1])
        let jws = Make.outer(pki, type: m.type, subtype: m.subtype, data: data, changes: ["notificationUUID": uuid, "signedDate": m.signed])
        let verified = try await SignedDataVerifier(trustedRoots: [pki.root], bundleID: Kit.bundle).verifyNotification(jws, appAppleID: Make.appAppleID)
        return ReceivedNotification(verified, signedPayload: jws, source: .push, receivedAtMs: Kit.signedDate)
    }

    @Test(arguments: StoreKind.available) func aRefundOfLastMonthTakesNoAccessAndIsInTheTrailOnce(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let ingest = NotificationIngest(bundleID: Kit.bundle)
            let chain = "7000000001"
            let id = try await db.insert(userID: "u", receipt: "R", SubscriptionState(originalTransactionID: chain))
            var outcomes: [NotificationOutcome] = []
            for (index, message) in Self.messages.enumerated() {
                outcomes += try await db.store.receive([Self.received(pki, message, chain: chain, uuid: "m\(index)")], ingest: ingest, nowMs: Kit.signedDate)
            }
            #expect(outcomes == [.applied, .applied, .unchanged, .unchanged, .applied])
            #expect(try await db.store.subscription(id: id)?.state == Self.truth(chain))
            #expect(try await db.store.history(userID: "u").map(\.reason) == ["auto_renew_off", "refunded_earlier_period", "renewed", "renewed"])
            #expect(try await db.row("SELECT transaction_id, revoked_at, notification_id FROM subscription_events WHERE reason = 'refunded_earlier_period'") == [
                "transaction_id": "t1", "revoked_at": "\(Self.start + 33 * Self.day)", "notification_id": "m3",
            ])
            #expect(try await db.row("SELECT transaction_id, transaction_signed_at, receipt_uploaded FROM subscriptions WHERE id = \(id)") == [
                "transaction_id": "t2", "transaction_signed_at": "\(Self.start + 40 * Self.day)", "receipt_uploaded": "0",
            ])
            let stored = try await db.store.notifications(NotificationQuery(limit: 10))
            #expect(stored.map(\.appleStatus) == [1, 1, 1, 1, 1])
            #expect(stored.map(\.statusAgrees) == [true, true, true, true, true])
        }
    }

    /// Apple gives no ordering guarantee: every order ends on the truth, with the refund in the
    /// trail once, and an order that leaves the row contradicting Apple's status marks it due.
    @Test(arguments: StoreKind.available) func inAnyOrderTheRowEndsOnTheTruth(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let ingest = NotificationIngest(bundleID: Kit.bundle)
            var random = SeededRandom(seed: 36)
            var orders: [[Int]] = [Array(0..<5), Array((0..<5).reversed()), [0, 3, 2, 1, 4], [0, 4, 3, 1, 2]]
            for _ in 0..<8 { orders.append(Array(0..<5).shuffled(using: &random)) }
            for (index, order) in orders.enumerated() {
                let chain = "71000000\(10 + index)"
                let id = try await db.insert(userID: "u\(index)", receipt: "R", SubscriptionState(originalTransactionID: chain))
                var askedWhileRefunded = false
                for step in order {
                    let n = try await Self.received(pki, Self.messages[step], chain: chain, uuid: "o\(index)-m\(step)")
                    _ = try await db.store.receive([n], ingest: ingest, nowMs: Kit.signedDate)
                    let row = try #require(try await db.store.subscription(id: id))
                    if row.state.cancelledAt != nil {
                        // Refunded while Apple says active: the row is due for the next run.
                        askedWhileRefunded = try await db.row("SELECT receipt_uploaded FROM subscriptions WHERE id = \(id)") == ["receipt_uploaded": "1"]
                        #expect(askedWhileRefunded, "order \(order)")
                    }
                }
                #expect(try await db.store.subscription(id: id)?.state == Self.truth(chain), "order \(order)")
                let reasons = try await db.store.history(userID: "u\(index)").map(\.reason)
                #expect(reasons.count { $0 == "refunded" || $0 == "refunded_earlier_period" } == 1, "order \(order): \(reasons)")
            }
        }
    }
}
