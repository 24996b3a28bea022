import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// A verified notification recorded and applied in one transaction, through the same decision and
/// the same row update plan as a poll, on every store: the trail names the notification, a
/// duplicate changes nothing, an older one arriving after a newer one is stale, one no row owns
/// waits for the row its `appAccountToken` names, and another environment's never touches a row.
@Suite struct NotificationIngestTests {
    typealias Kit = SignedPayloads
    typealias Make = NotificationVerificationTests

    static let ingest = NotificationIngest(bundleID: Kit.bundle)
    static let monthly = SubscriptionState(
        originalTransactionID: "1000000100", productID: "com.example.premium.monthly", environment: "Production", expiresAt: 1_789_000_000_000,
        autoRenewStatus: true, autoRenewProductID: "com.example.premium.yearly")

    static func received(
        _ pki: TestPKI, uuid: String, signedAt: Int64, expires: Int64, environment: String = "Production", token: String? = nil,
        type: String = "DID_RENEW", subtype: String? = nil, receivedAt: Int64? = nil, transactionID: String? = nil
    ) async throws -> ReceivedNotification {
        var transaction = Kit.transaction(["expiresDate": expires, "signedDate": signedAt, "environment": environment])
        // A renewal is a new transaction; the same one with a later expiry is an extension.
        if let transactionID { transaction["transactionId"] = transactionID }
        if let token { transaction["appAccountToken"] = token }
        let data = Make.data(pki, environment: environment, transaction: transaction, renewal: Kit.renewal(["signedDate": signedAt, "environment": environment]))
        let jws = Make.outer(pki, type: type, subtype: subtype, data: data, changes: ["notificationUUID": uuid, "signedDate": signedAt])
        let verified = try await SignedDataVerifier(trustedRoots: [pki.root], bundleID: Kit.bundle).verifyNotification(jws, appAppleID: Make.appAppleID)
        return ReceivedNotification(verified, signedPayload: jws, source: .push, receivedAtMs: receivedAt ?? signedAt + 1_000)
    }

    @Test(arguments: StoreKind.available) func aNotificationUpdatesItsRowOnceAndAnOlderOneIsStale(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let before = Self.monthly
            let id = try await db.insert(userID: "u", receipt: "R", before)
            let now = Kit.signedDate + 60_000

            let renewed = try await Self.received(pki, uuid: "n-new", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            #expect(try await db.store.receive([renewed, renewed], ingest: Self.ingest, nowMs: now) == [.applied, .duplicate])
            var after = before
            after.expiresAt = 1_791_600_000_000
            after.transactionID = "1000000123"
            after.purchasedAt = 1_789_000_000_000
            #expect(try await db.store.subscription(id: id)?.state == after)
            #expect(try await db.store.subscription(id: id)?.latestReceipt == "R")
            #expect(try await db.row("SELECT apple_state_at, last_status_backend, last_apple_status, last_verified_at FROM subscriptions WHERE id = \(id)") == [
                "apple_state_at": "\(Kit.signedDate)", "last_status_backend": "notification", "last_apple_status": "1", "last_verified_at": "\(now)",
            ])
            // Apple's retry of the same notification, later.
            #expect(try await db.store.receive([renewed], ingest: Self.ingest, nowMs: now + 5) == [.duplicate])

            // Delivered late: signed before the one already applied.
            let late = try await Self.received(pki, uuid: "n-old", signedAt: Kit.signedDate - 86_400_000, expires: 1_789_000_000_000)
            #expect(try await db.store.receive([late], ingest: Self.ingest, nowMs: now + 10) == [.stale])
            #expect(try await db.store.subscription(id: id)?.state == after)
            let trail = try await db.store.history(userID: "u")
            #expect(trail.map(\.reason) == ["stale", "renewed"])
            #expect(trail.map(\.source) == ["notification", "notification"])
            #expect(trail.map(\.notificationID) == ["n-old", "n-new"])

            let stored = try await db.store.notifications(NotificationQuery())
            #expect(stored.map(\.id) == ["n-new", "n-old"])
            #expect(stored.map(\.outcome) == ["applied", "stale"])
            #expect(stored[0] == StoredNotification(
                id: "n-new", version: 2, type: "DID_RENEW", subtype: nil, signedAtMs: Kit.signedDate, appleStateAtMs: Kit.signedDate,
                originalTransactionID: "1000000100", appAccountToken: nil, environment: "Production", source: "push", receivedAtMs: Kit.signedDate + 1_000,
                outcome: "applied", subscriptionID: id, userID: "u", appleStatus: 1, statusAgrees: true))
            #expect(try await db.row("SELECT count(*) AS n FROM app_store_notifications WHERE signed_payload IS NOT NULL") == ["n": "0"])
        }
    }

    @Test(arguments: StoreKind.available) func notificationsOfOneRowInOneBatchAreAppliedInOrder(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let id = try await db.insert(userID: "u", receipt: "R", Self.monthly)
            let first = try await Self.received(pki, uuid: "n-1", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            let second = try await Self.received(pki, uuid: "n-2", signedAt: Kit.signedDate + 1_000, expires: 1_794_200_000_000, transactionID: "1000000199")
            let older = try await Self.received(pki, uuid: "n-0", signedAt: Kit.signedDate - 1_000, expires: 1_789_500_000_000)
            #expect(try await db.store.receive([first, second, older, second], ingest: Self.ingest, nowMs: Kit.signedDate + 5_000) == [
                .applied, .applied, .stale, .duplicate,
            ])
            #expect(try await db.store.subscription(id: id)?.state.expiresAt == 1_794_200_000_000)
            #expect(try await db.row("SELECT apple_state_at FROM subscriptions WHERE id = \(id)") == ["apple_state_at": "\(Kit.signedDate + 1_000)"])
            let trail = try await db.store.history(userID: "u")
            #expect(trail.map(\.reason) == ["stale", "renewed", "renewed"])
            #expect(trail.map(\.notificationID) == ["n-0", "n-2", "n-1"])
            #expect(try await db.store.notifications(NotificationQuery()).map(\.outcome).sorted() == ["applied", "applied", "stale"])
        }
    }

    @Test(arguments: StoreKind.available) func anUnmatchedNotificationWaitsForTheRowItsAppAccountTokenNames(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let token = "7d2b9c4e-1f3a-4b5c-9d8e-0a1b2c3d4e5f"
            let bought = try await Self.received(pki, uuid: "n-buy", signedAt: Kit.signedDate, expires: 1_791_600_000_000, token: token, type: "SUBSCRIBED", subtype: "INITIAL_BUY")
            #expect(try await db.store.receive([bought], ingest: Self.ingest, nowMs: Kit.signedDate + 2_000) == [.unmatched])
            // The same id twice in one batch (a retry beside a catch-up): the second is a duplicate.
            #expect(try await db.store.receive([bought, bought], ingest: Self.ingest, nowMs: Kit.signedDate + 2_500) == [.unmatched, .duplicate])
            #expect(try await db.store.notifications(NotificationQuery(unmatchedOnly: true)).map(\.id) == ["n-buy"])
            #expect(try await db.row("SELECT count(*) AS n FROM app_store_notifications WHERE signed_payload IS NOT NULL") == ["n": "1"])

            // The web service enrols the user with the token the app passed at purchase; the
            // notification delivered again (a retry, a catch-up) is adopted by that row.
            let id = try await db.insert(userID: "buyer", receipt: "R-none")
            try await db.execute("UPDATE subscriptions SET app_account_token = '\(token)' WHERE id = \(id)")
            #expect(try await db.store.receive([bought], ingest: Self.ingest, nowMs: Kit.signedDate + 3_000) == [.applied])
            let row = try #require(try await db.store.subscription(id: id))
            #expect(row.state.originalTransactionID == "1000000100")
            #expect(row.state.expiresAt == 1_791_600_000_000)
            #expect(try await db.row("SELECT receipt_uploaded FROM subscriptions WHERE id = \(id)") == ["receipt_uploaded": "0"])
            #expect(try await db.store.notifications(NotificationQuery(unmatchedOnly: true)) == [])
            #expect(try await db.store.notifications(NotificationQuery(userID: "buyer")).map(\.outcome) == ["applied"])
            #expect(try await db.row("SELECT count(*) AS n FROM app_store_notifications WHERE signed_payload IS NOT NULL") == ["n": "0"])
            #expect(try await db.store.history(userID: "buyer").map(\.reason) == ["first_verified"])
            // Now it is applied, a further delivery is a duplicate.
            #expect(try await db.store.receive([bought], ingest: Self.ingest, nowMs: Kit.signedDate + 4_000) == [.duplicate])
        }
    }

    /// One user buying in two subscription groups: both purchases carry the token the app passed,
    /// and Apple's history (or a retry) can deliver them in one batch. The row the token names adopts
    /// one chain; the other waits for its own row, on both stores (a batch must not hand both to it).
    @Test(arguments: StoreKind.available) func twoChainsOfOneTokenInOneBatchAdoptOneRow(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let token = "7d2b9c4e-1f3a-4b5c-9d8e-0a1b2c3d4e5f"
            let id = try await db.insert(userID: "buyer", receipt: "R-none")
            try await db.execute("UPDATE subscriptions SET app_account_token = '\(token)' WHERE id = \(id)")
            func bought(_ uuid: String, chain: String, transaction: String) async throws -> ReceivedNotification {
                let signed = Kit.transaction([
                    "originalTransactionId": chain, "transactionId": transaction, "appAccountToken": token, "expiresDate": 1_791_600_000_000,
                ])
                let data = Make.data(pki, transaction: signed, renewal: Kit.renewal(["originalTransactionId": chain]))
                let jws = Make.outer(pki, type: "SUBSCRIBED", subtype: "INITIAL_BUY", data: data, changes: ["notificationUUID": uuid])
                let verified = try await SignedDataVerifier(trustedRoots: [pki.root], bundleID: Kit.bundle).verifyNotification(jws, appAppleID: Make.appAppleID)
                return ReceivedNotification(verified, signedPayload: jws, source: .history, receivedAtMs: Kit.signedDate + 1_000)
            }
            let first = try await bought("n-a", chain: "1000000100", transaction: "1000000101")
            let second = try await bought("n-b", chain: "2000000100", transaction: "2000000101")
            #expect(try await db.store.receive([first, second], ingest: Self.ingest, nowMs: Kit.signedDate + 2_000) == [.applied, .unmatched])
            #expect(try await db.store.subscription(id: id)?.state.originalTransactionID == "1000000100")
            #expect(try await db.store.notifications(NotificationQuery(unmatchedOnly: true)).map(\.id) == ["n-b"])
            #expect(try await db.store.history(userID: "buyer").map(\.reason) == ["first_verified"])
        }
    }

    /// A notification the database refuses for its own sake (here a trigger's constraint) fails
    /// its batch with the database's error, not a store-wide one, and writes nothing, on both
    /// stores: the receiver then writes each of the batch alone, so one cannot hold back the rest
    /// (SQLite once reported it as the store being unwritable).
    @Test(arguments: StoreKind.available) func aNotificationsOwnErrorFailsItsBatchAsItsOwn(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let id = try await db.insert(userID: "u", receipt: "R", Self.monthly)
            let store = try #require(db.store as? any SQLStore)
            switch kind {
            case .sqlite:
                try await store.execute("""
                    CREATE TRIGGER refuse BEFORE INSERT ON app_store_notifications WHEN NEW.notification_id = 'n-refused'
                    BEGIN SELECT RAISE(ABORT, 'refused'); END
                    """)
            case .postgres:
                try await store.execute("""
                    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                        IF NEW.notification_id = 'n-refused' THEN RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation'; END IF;
                        RETURN NEW; END $$
                    """)
                try await store.execute("CREATE TRIGGER refuse BEFORE INSERT ON app_store_notifications FOR EACH ROW EXECUTE FUNCTION refuse()")
            }
            let renewed = try await Self.received(pki, uuid: "n-good", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            let refused = try await Self.received(pki, uuid: "n-refused", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            let error = await #expect(throws: (any Error).self) {
                try await db.store.receive([renewed, refused], ingest: Self.ingest, nowMs: Kit.signedDate + 1)
            }
            #expect(error.map { !($0 is StoreError) } == true)
            #expect(try await db.store.subscription(id: id)?.state == Self.monthly)
            #expect(try await db.store.notifications(NotificationQuery()) == [])
            #expect(try await db.store.receive([renewed], ingest: Self.ingest, nowMs: Kit.signedDate + 2) == [.applied])
        }
    }

    @Test(arguments: StoreKind.available) func aSandboxNotificationNeverChangesAProductionRow(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let id = try await db.insert(userID: "u", receipt: "R", Self.monthly)
            let sandbox = try await Self.received(pki, uuid: "n-sb", signedAt: Kit.signedDate, expires: 1_799_000_000_000, environment: "Sandbox")
            #expect(try await db.store.receive([sandbox], ingest: Self.ingest, nowMs: Kit.signedDate + 1) == [.otherEnvironment])
            #expect(try await db.store.subscription(id: id)?.state == Self.monthly)
            #expect(try await db.store.history(userID: "u") == [])
            #expect(try await db.store.notifications(NotificationQuery()).map(\.subscriptionID) == [id])
        }
    }

    @Test(arguments: StoreKind.available) func aNotificationAboutNoSubscriptionIsStoredAndIgnored(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let jws = Make.outer(pki, type: "TEST", data: nil, changes: ["notificationUUID": "n-test"])
            let verified = try await SignedDataVerifier(trustedRoots: [pki.root], bundleID: Kit.bundle).verifyNotification(jws, appAppleID: Make.appAppleID)
            let test = ReceivedNotification(verified, signedPayload: jws, source: .push, receivedAtMs: Kit.signedDate)
            #expect(try await db.store.receive([test], ingest: Self.ingest, nowMs: Kit.signedDate) == [.ignored])
            #expect(try await db.store.notifications(NotificationQuery()).map(\.name) == ["TEST"])
        }
    }

    @Test(arguments: StoreKind.available) func aReceiptUploadedMeanwhileStaysDueForThePoll(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let id = try await db.insert(userID: "u", receipt: "R", Self.monthly)
            try await db.execute("UPDATE subscriptions SET latest_receipt = 'R-uploaded', receipt_uploaded = 1 WHERE id = \(id)")
            let renewed = try await Self.received(pki, uuid: "n", signedAt: Kit.signedDate, expires: 1_791_600_000_000)
            #expect(try await db.store.receive([renewed], ingest: Self.ingest, nowMs: Kit.signedDate + 1) == [.applied])
            #expect(try await db.row("SELECT latest_receipt, receipt_uploaded, expires_at FROM subscriptions WHERE id = \(id)") == [
                "latest_receipt": "R-uploaded", "receipt_uploaded": "1", "expires_at": "1791600000000",
            ])
        }
    }
}
