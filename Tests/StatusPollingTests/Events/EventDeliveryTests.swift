import AsyncHTTPClient
import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The deliverer against a real endpoint on loopback, on every store: signed, in order per user,
/// users at once, a failure retried after its backoff while that user's later events wait,
/// dead-lettered past the maximum age, replayed, pruned; a redirect never followed.
@Suite struct EventDeliveryTests {
    let t0 = AppleJSON.t0
    let day = AppleJSON.day

    /// Writes `count` changes (a first verification, then renewals) for each user by polls; the
    /// outbox's events in order as (event id, user).
    func writeChanges(_ db: StoreUnderTest, _ counts: [(user: String, count: Int)]) async throws -> [(id: String, user: String)] {
        for (user, count) in counts {
            let id = try await db.insert(userID: user, receipt: "R-\(user)")
            for n in 0..<count {
                let state = SubscriptionState(
                    originalTransactionID: "otid-\(user)", productID: "premium.monthly", environment: "Production",
                    expiresAt: t0 + Int64(n + 1) * 30 * day, autoRenewStatus: true, purchasedAt: t0 + Int64(n) * 30 * day)
                _ = try await db.store.write(ResultBatch([.verified(VerifiedUpdate(
                    subscriptionID: id, receiptSent: "R-\(user)", state: state, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))]))
            }
        }
        return try await db.rows("SELECT event_id, user_id FROM outbound_events ORDER BY id").map { ($0["event_id"] ?? "", $0["user_id"] ?? "") }
    }

    func withDeliverer<R: Sendable>(
        _ db: StoreUnderTest, path: String = "hook", policy: DeliveryPolicy = DeliveryPolicy(),
        _ body: (WebhookHook, EventDeliverer) async throws -> R
    ) async throws -> R {
        let hook = try WebhookHook(clockMs: t0 + 60_000)
        return try await withLoopbackServer(hook.router) { port in
            let client = WebhookClient()
            var logger = Logger(label: "deliverer")
            logger.logLevel = .critical
            let endpoint = try WebhookEndpoint(name: "web", url: "http://127.0.0.1:\(port)/\(path)", secret: hook.secret)
            let deliverer = EventDeliverer(
                outbox: db.store, endpoints: [endpoint], policy: policy, owner: "test", client: client, now: hook.now, random: SplitMix64(seed: 38),
                logger: logger)
            do {
                let result = try await body(hook, deliverer)
                try await client.shutdown()
                return result
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }

    @Test(arguments: StoreKind.available) func eachUsersEventsArriveOnceInOrderAndAFailureHoldsOnlyItsUser(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let events = try await writeChanges(db, [("u1", 3), ("u2", 2), ("u3", 1)])
            #expect(events.map(\.user) == ["u1", "u1", "u1", "u2", "u2", "u3"])
            try await withDeliverer(db) { hook, deliverer in
                hook.failuresAhead.withLock { $0["u1"] = 1 }
                let first = try await deliverer.deliverDue()
                #expect(first == DeliveryReport(added: 6, delivered: 3, retried: 1))
                // u1's first failed: its later events wait; the other users' all arrived.
                #expect(hook.accepted.withLock { $0.map(\.id) }.sorted() == [events[3].id, events[4].id, events[5].id].sorted())
                #expect(try await deliverer.deliverDue() == DeliveryReport(), "nothing is due before the backoff")

                hook.advance(by: 5_000)
                #expect(try await deliverer.deliverDue() == DeliveryReport(delivered: 3))
                let accepted = hook.accepted.withLock { $0 }
                #expect(accepted.count == 6)
                for user in ["u1", "u2", "u3"] {
                    #expect(accepted.filter { $0.userID == user }.map(\.id) == events.filter { $0.user == user }.map(\.id), "\(user)")
                }
                // The retry sent the same event: same id, and every request was signed.
                let requests = hook.requests.withLock { $0 }
                #expect(requests.count == 7)
                #expect(requests.filter { !$0.signed }.isEmpty)
                #expect(requests.filter { $0.id == events[0].id }.count == 2)
                let bodies = try await db.rows("SELECT body FROM outbound_events ORDER BY id").map { $0["body"] ?? "" }
                #expect(Set(accepted.map(\.body)) == Set(bodies))
                let states = try await db.rows("SELECT state, attempts FROM event_deliveries ORDER BY event")
                #expect(states.map { $0["state"] } == Array(repeating: "delivered", count: 6))
                #expect(states.map { $0["attempts"] } == ["2", "1", "1", "1", "1", "1"])
            }
        }
    }

    @Test(arguments: StoreKind.available) func pastTheMaximumAgeAnEventIsDeadLetteredThenReplayedAndPruned(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let events = try await writeChanges(db, [("u1", 2)])
            try await withDeliverer(db) { hook, deliverer in
                hook.status.withLock { $0 = 503 }
                #expect(try await deliverer.deliverDue() == DeliveryReport(added: 2, retried: 1))
                // Down for four days: the next attempt is past the three days; both are given up, in order.
                hook.advance(by: 4 * day)
                #expect(try await deliverer.deliverDue() == DeliveryReport(dead: 2))
                let failed = try await db.store.events(.failed, limit: 10)
                #expect(failed.map(\.eventID) == events.reversed().map(\.id))
                #expect(failed.map(\.state) == ["dead", "dead"])
                #expect(failed.map(\.lastStatus) == [503, 503])
                #expect(failed.map(\.lastError) == ["HTTP 503", "HTTP 503"])
                #expect(try await db.store.events(.pending, limit: 10).isEmpty)
                #expect(try await db.store.deliveryCounts() == ["pending": 0, "delivered": 0, "dead": 2, "events": 2])

                hook.status.withLock { $0 = nil }
                #expect(try await db.store.replay(.id("evt_unknown"), endpoint: nil, nowMs: hook.now()) == 0)
                #expect(try await db.store.replay(.since(t0), endpoint: "web", nowMs: hook.now()) == 2)
                #expect(try await deliverer.deliverDue() == DeliveryReport(delivered: 2))
                #expect(hook.accepted.withLock { $0.map(\.id) } == events.map(\.id))

                // Nothing written before the cut is kept once delivered; a pending one would be.
                #expect(try await db.store.pruneEvents(writtenBeforeMs: t0) == 0)
                #expect(try await db.store.pruneEvents(writtenBeforeMs: t0 + 1) == 2)
                #expect(try await db.store.deliveryCounts() == ["pending": 0, "delivered": 0, "dead": 0, "events": 0])
            }
        }
    }

    /// An endpoint added ten days after the events it is given (kept for it): a failure is retried,
    /// not dead-lettered at once — the age limit counts from when the endpoint got them.
    @Test(arguments: StoreKind.available) func anEndpointAddedLaterHasTheWholeAgeLimit(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let events = try await writeChanges(db, [("u1", 2)])
            try await withDeliverer(db) { hook, deliverer async throws in
                hook.advance(by: 10 * day)
                hook.failuresAhead.withLock { $0["u1"] = 1 }
                #expect(try await deliverer.deliverDue() == DeliveryReport(added: 2, retried: 1))
                #expect(try await db.rows("SELECT queued_at FROM event_deliveries ORDER BY event").map { $0["queued_at"] } == [
                    "\(t0 + 60_000 + 10 * day)", "\(t0 + 60_000 + 10 * day)",
                ])
                #expect(try await db.store.events(.failed, limit: 10).isEmpty)
                hook.advance(by: 5_000)
                #expect(try await deliverer.deliverDue() == DeliveryReport(delivered: 2))
                #expect(hook.accepted.withLock { $0.map(\.id) } == events.map(\.id))
            }
        }
    }

    @Test(arguments: StoreKind.available) func aRedirectIsAFailureAndIsNotFollowed(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            _ = try await writeChanges(db, [("u1", 1)])
            try await withDeliverer(db, path: "moved") { hook, deliverer in
                #expect(try await deliverer.deliverDue() == DeliveryReport(added: 1, retried: 1))
                #expect(hook.redirectTargetHits.withLock { $0 } == 0)
                let pending = try await db.store.events(.pending, limit: 10)
                #expect(pending.map(\.lastError) == ["HTTP 307: redirects are not followed"])
            }
        }
    }

    /// Events written after a pass are added to the endpoint's deliveries by the next, once each.
    @Test(arguments: StoreKind.available) func laterEventsAreAddedOnce(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            _ = try await writeChanges(db, [("u1", 1)])
            try await withDeliverer(db) { hook, deliverer in
                #expect(try await deliverer.deliverDue() == DeliveryReport(added: 1, delivered: 1))
                _ = try await writeChanges(db, [("u2", 2)])
                #expect(try await deliverer.deliverDue() == DeliveryReport(added: 2, delivered: 2))
                #expect(try await deliverer.deliverDue() == DeliveryReport())
                #expect(hook.accepted.withLock { $0.map(\.userID) } == ["u1", "u2", "u2"])
            }
        }
    }
}
