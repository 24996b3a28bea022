import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The outbox on every store: each contract change gets exactly one outbound event, written in
/// the change's transaction beside its audit row (a poll's and a notification's alike), an audit
/// row that changes nothing gets none, and a write that fails leaves neither.
@Suite struct OutboxTests {
    let t0 = AppleJSON.t0
    let day = AppleJSON.day

    func verified(_ otid: String, expires: Int64, purchased: Int64? = nil, autoRenew: Bool = true) -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: otid, productID: "premium.monthly", environment: "Production", expiresAt: expires, autoRenewStatus: autoRenew,
            autoRenewProductID: "premium.monthly", purchasedAt: purchased)
    }

    func update(_ id: Int64, receipt: String, _ state: SubscriptionState, at ms: Int64, others: [SubscriptionState] = []) -> ResultBatch.Result {
        .verified(VerifiedUpdate(
            subscriptionID: id, runID: nil, receiptSent: receipt, state: state, otherChains: others, latestReceipt: nil,
            upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: ms))
    }

    /// The outbox in order, with each event's audit row beside it.
    func outbox(_ db: StoreUnderTest) async throws -> [[String: String]] {
        try await db.rows("""
            SELECT o.id, o.event_id, o.type, o.user_id, o.subscription_id, o.source, o.apple_at, o.at, o.body, e.reason, e.id AS audit_id
            FROM outbound_events o JOIN subscription_events e ON e.id = o.audit_event_id ORDER BY o.id
            """)
    }

    @Test(arguments: StoreKind.available) func aPollWritesOneEventPerChange(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "u1", receipt: "R1")
            // First verification, with a second chain of the receipt that no row owns (enrolled).
            _ = try await db.store.write(ResultBatch([
                update(id, receipt: "R1", verified("A", expires: t0 + 30 * day), at: t0, others: [verified("B", expires: t0 + 300 * day)])
            ]))
            // A renewal, then the same answer again (no change), then an older answer (stale).
            let renewed = verified("A", expires: t0 + 60 * day, purchased: t0 + 30 * day)
            _ = try await db.store.write(ResultBatch([update(id, receipt: "R1", renewed, at: t0 + 31 * day)]))
            _ = try await db.store.write(ResultBatch([update(id, receipt: "R1", renewed, at: t0 + 32 * day)]))
            var old = renewed
            old.autoRenewStatus = false
            _ = try await db.store.write(ResultBatch([
                .verified(VerifiedUpdate(
                    subscriptionID: id, receiptSent: "R1", state: old, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid),
                    verifiedAtMs: t0 + 33 * day, appleStateAtMs: t0))
            ]))

            let trail = try await db.rows("SELECT reason FROM subscription_events ORDER BY id").map { $0["reason"] ?? "" }
            #expect(trail == ["first_verified", "discovered", "renewed", "stale"])
            let events = try await outbox(db)
            #expect(events.map { $0["type"] } == ["initial_purchase", "initial_purchase", "renewal"])
            #expect(events.map { $0["reason"] } == ["first_verified", "discovered", "renewed"])
            #expect(events.map { $0["source"] } == ["poll", "poll", "poll"])
            #expect(events.map { $0["user_id"] } == ["u1", "u1", "u1"])
            #expect(events.map { $0["at"] } == ["\(t0)", "\(t0)", "\(t0 + 31 * day)"])
            #expect(Set(events.compactMap { $0["event_id"] }).count == 3)
            let discovered = try #require(try await db.row("SELECT id FROM subscriptions WHERE original_transaction_id = 'B'")?["id"])
            #expect(events.map { $0["subscription_id"] } == ["\(id)", discovered, "\(id)"])

            let body = try JSONSerialization.jsonObject(with: Data(try #require(events[2]["body"]).utf8)) as? [String: Any]
            #expect(body?["id"] as? String == events[2]["event_id"])
            #expect(body?["type"] as? String == "renewal")
            let data = try #require(body?["data"] as? [String: Any])
            #expect(data["user_id"] as? String == "u1")
            #expect(data["original_transaction_id"] as? String == "A")
            #expect(data["product_id"] as? String == "premium.monthly")
            #expect("\(data["audit_event_id"] ?? "")" == events[2]["audit_id"])
            #expect(data["source"] as? String == "poll")
            let before = try #require(data["entitlement_before"] as? [String: Any])
            let after = try #require(data["entitlement_after"] as? [String: Any])
            #expect(before["state"] as? String == "expired")
            #expect(before["is_entitled"] as? Bool == false)
            #expect(before["entitled_until_ms"] as? Int64 == t0 + 30 * day)
            #expect(after["state"] as? String == "active")
            #expect(after["is_entitled"] as? Bool == true)
            #expect(after["entitled_until_ms"] as? Int64 == t0 + 60 * day)
        }
    }

    @Test(arguments: StoreKind.available) func aNotificationWritesOneEventPerChange(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            typealias Messages = EarlierPeriodNotificationTests
            let pki = try TestPKI()
            let ingest = NotificationIngest(bundleID: SignedPayloads.bundle)
            let chain = "7000000001"
            let id = try await db.insert(userID: "u", receipt: "R", SubscriptionState(originalTransactionID: chain))
            for (index, message) in Messages.messages.enumerated() {
                _ = try await db.store.receive(
                    [Messages.received(pki, message, chain: chain, uuid: "m\(index)")], ingest: ingest, nowMs: SignedPayloads.signedDate)
            }
            // The same notification again changes nothing.
            _ = try await db.store.receive([Messages.received(pki, Messages.messages[4], chain: chain, uuid: "m4")], ingest: ingest, nowMs: SignedPayloads.signedDate)
            let events = try await outbox(db)
            #expect(events.map { $0["type"] } == ["renewal", "renewal", "refunded_earlier_period", "auto_renew_disabled"])
            #expect(events.map { $0["reason"] } == ["renewed", "renewed", "refunded_earlier_period", "auto_renew_off"])
            #expect(events.map { $0["source"] } == ["notification", "notification", "notification", "notification"])
            #expect(events.map { $0["subscription_id"] } == ["\(id)", "\(id)", "\(id)", "\(id)"])
            // Apple's instant is each message's signedDate; ours the receiver's clock.
            let signed = [0, 1, 3, 4].map { "\(Messages.messages[$0].signed)" }
            #expect(events.map { $0["apple_at"] } == signed)
            #expect(events.map { $0["at"] } == Array(repeating: "\(SignedPayloads.signedDate)", count: 4))
            let refund = try JSONSerialization.jsonObject(with: Data(try #require(events[2]["body"]).utf8)) as? [String: Any]
            let data = try #require(refund?["data"] as? [String: Any])
            #expect(data["transaction_id"] as? String == "t1")
            #expect(data["notification_id"] as? String == "m3")
            #expect((data["entitlement_after"] as? [String: Any])?["is_entitled"] as? Bool == true)
        }
    }

    /// Without a reader (no endpoint, no `event_outbox`) the writers leave the outbox alone: a
    /// poll's and a notification's changes write their rows and audit rows, no event; a store that
    /// writes it again adds the events of its changes from then on.
    @Test(arguments: StoreKind.available) func withoutAReaderNoEventIsWritten(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            typealias Messages = EarlierPeriodNotificationTests
            let quiet = try await db.database(writesOutbox: false).open()
            let id = try await db.insert(userID: "u1", receipt: "R1")
            _ = try await quiet.write(ResultBatch([update(id, receipt: "R1", verified("A", expires: t0 + 30 * day), at: t0)]))
            let pki = try TestPKI()
            let chain = "7000000001"
            _ = try await db.insert(userID: "u2", receipt: "R2", SubscriptionState(originalTransactionID: chain))
            _ = try await quiet.receive(
                [Messages.received(pki, Messages.messages[0], chain: chain, uuid: "m0")], ingest: NotificationIngest(bundleID: SignedPayloads.bundle),
                nowMs: SignedPayloads.signedDate)
            try await quiet.close()
            #expect(try await db.rows("SELECT reason FROM subscription_events ORDER BY id").map { $0["reason"] } == ["first_verified", "renewed"])
            #expect(try await db.row("SELECT count(*) AS n FROM outbound_events")?["n"] == "0")
            // The default store (a reader configured) writes the next change's event.
            _ = try await db.store.write(ResultBatch([update(id, receipt: "R1", verified("A", expires: t0 + 60 * day, purchased: t0 + 30 * day), at: t0 + 31 * day)]))
            #expect(try await outbox(db).map { $0["reason"] } == ["renewed"])
        }
    }

    /// The outbox is the transaction's last insert: a failure there rolls back the contract change
    /// and its audit row too, and a failure before it writes no event.
    @Test(arguments: StoreKind.available) func aFailedWriteLeavesNeitherTheChangeNorItsEvent(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let good = try await db.insert(userID: "good", receipt: "R-good")
            let refused = try await db.insert(userID: "refused", receipt: "R-refused")
            if kind == .sqlite {
                try await db.execute("""
                    CREATE TRIGGER refuse BEFORE INSERT ON outbound_events WHEN NEW.user_id = 'refused'
                    BEGIN SELECT RAISE(ABORT, 'refused event'); END
                    """)
            } else {
                try await db.execute("""
                    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION 'refused event' USING ERRCODE = 'integrity_constraint_violation'; END $$
                    """)
                try await db.execute("""
                    CREATE TRIGGER refuse BEFORE INSERT ON outbound_events FOR EACH ROW WHEN (NEW.user_id = 'refused') EXECUTE FUNCTION refuse()
                    """)
            }
            await #expect(throws: (any Error).self) {
                try await db.store.write(ResultBatch([
                    update(good, receipt: "R-good", verified("G", expires: t0 + 30 * day), at: t0),
                    update(refused, receipt: "R-refused", verified("X", expires: t0 + 30 * day), at: t0),
                ]))
            }
            #expect(try await db.store.subscription(id: good)?.state == .unverified)
            #expect(try await db.store.subscription(id: refused)?.state == .unverified)
            #expect(try await db.row("SELECT count(*) AS n FROM subscription_events")?["n"] == "0")
            #expect(try await db.row("SELECT count(*) AS n FROM outbound_events")?["n"] == "0")

            // A failure before the outbox (the row's update) leaves no event either.
            try await db.poisonUpdates(ofUser: "good")
            await #expect(throws: (any Error).self) {
                try await db.store.write(ResultBatch([update(good, receipt: "R-good", verified("G", expires: t0 + 30 * day), at: t0)]))
            }
            #expect(try await db.row("SELECT count(*) AS n FROM outbound_events")?["n"] == "0")
            #expect(try await db.row("SELECT count(*) AS n FROM subscription_events")?["n"] == "0")
        }
    }
}
