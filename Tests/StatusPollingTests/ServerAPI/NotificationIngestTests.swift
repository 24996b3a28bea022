import Foundation
import Testing

@testable import StatusPolling

/// A verified notification applied to the row that owns its chain, through the same decision and
/// the same writer as a poll, on every store: the trail names the notification, and an older one
/// arriving after a newer one changes nothing.
@Suite struct NotificationIngestTests {
    typealias Kit = SignedDataVerifierTests
    typealias Make = NotificationVerificationTests

    func notification(_ pki: TestPKI, uuid: String, signedAt: Int64, expires: Int64) async throws -> SignedNotification {
        let data = Make.data(pki, transaction: Kit.transaction(["expiresDate": expires, "signedDate": signedAt]), renewal: Kit.renewal(["signedDate": signedAt]))
        let jws = Make.outer(pki, data: data, changes: ["notificationUUID": uuid, "signedDate": signedAt])
        return try await SignedDataVerifier(trustedRoots: [pki.root], bundleID: Kit.bundle).verifyNotification(jws, appAppleID: Make.appAppleID)
    }

    @Test(arguments: StoreKind.available) func aNotificationUpdatesItsRowAndAnOlderOneIsStale(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let before = SubscriptionState(
                originalTransactionID: "1000000100", productID: "com.example.premium.monthly", environment: "Production", expiresAt: 1_789_000_000_000,
                autoRenewStatus: true, autoRenewProductID: "com.example.premium.yearly")
            let id = try await db.insert(userID: "u", receipt: "R", before)
            let ingest = NotificationIngest(bundleID: Kit.bundle)
            let now = Kit.signedDate + 60_000

            let renewed = try await notification(pki, uuid: "n-new", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            let row = try #require(try await db.store.subscription(id: id))
            let result = try #require(ingest.result(for: renewed, row: row, nowMs: now))
            #expect(try await db.store.write(ResultBatch([result])) == [.written(previous: before)])
            var after = before
            after.expiresAt = 1_791_600_000_000
            #expect(try await db.store.subscription(id: id)?.state == after)
            #expect(try await db.store.subscription(id: id)?.latestReceipt == "R")
            #expect(try await db.row("SELECT apple_state_at, last_status_backend, last_apple_status FROM subscriptions WHERE id = \(id)") == [
                "apple_state_at": "\(Kit.signedDate)", "last_status_backend": "notification", "last_apple_status": "1",
            ])

            // Delivered late: signed before the one already applied.
            let late = try await notification(pki, uuid: "n-old", signedAt: Kit.signedDate - 86_400_000, expires: 1_789_000_000_000)
            let current = try #require(try await db.store.subscription(id: id))
            let stale = try #require(ingest.result(for: late, row: current, nowMs: now + 1))
            #expect(try await db.store.write(ResultBatch([stale])) == [.stale])
            #expect(try await db.store.subscription(id: id)?.state == after)
            let trail = try await db.store.history(userID: "u")
            #expect(trail.map(\.reason) == ["stale", "renewed"])
            #expect(trail.map(\.source) == ["notification", "notification"])
            #expect(trail.map(\.notificationID) == ["n-old", "n-new"])
        }
    }

    @Test func aNotificationForAnotherChainOrAppTouchesNoRow() async throws {
        let pki = try TestPKI()
        let renewed = try await notification(pki, uuid: "n", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
        let other = SubscriptionRow(id: 1, userID: "u", latestReceipt: "R", state: SubscriptionState(originalTransactionID: "999", environment: "Production"))
        #expect(NotificationIngest(bundleID: Kit.bundle).result(for: renewed, row: other, nowMs: Kit.signedDate) == nil)
        let owner = SubscriptionRow(id: 1, userID: "u", latestReceipt: "R", state: SubscriptionState(originalTransactionID: "1000000100", environment: "Production"))
        #expect(NotificationIngest(bundleID: "com.other.app").result(for: renewed, row: owner, nowMs: Kit.signedDate) == nil)
        #expect(NotificationIngest(bundleID: Kit.bundle).result(for: renewed, row: owner, nowMs: Kit.signedDate) != nil)
    }
}
