import AsyncHTTPClient
import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import PostgresStore
@testable import StatusPolling

/// Several deliverers on one PostgreSQL database: they share the deliveries through leases, each
/// event is accepted once and every user's in order, whichever deliverer sent it; and a commit that
/// wrote events wakes a listening deliverer (NOTIFY on `status_poller_events`).
@Suite(.enabled(if: PostgresTestServer.url != nil))
struct SharedDeliveryTests {
    let t0 = AppleJSON.t0
    let day = AppleJSON.day

    @Test func threeDeliverersShareTheWorkInOrderPerUser() async throws {
        try await withStore(.postgres) { db in
            // 20 users, 5 changes each, written interleaved as a night would.
            var ids: [String: Int64] = [:]
            for user in (0..<20).map({ "u\($0)" }) { ids[user] = try await db.insert(userID: user, receipt: "R-\(user)") }
            for n in 0..<5 {
                let results: [ResultBatch.Result] = ids.sorted { $0.key < $1.key }.map { user, id in
                    .verified(VerifiedUpdate(
                        subscriptionID: id, receiptSent: "R-\(user)", state: SubscriptionState(
                            originalTransactionID: "otid-\(user)", productID: "premium.monthly", environment: "Production",
                            expiresAt: t0 + Int64(n + 1) * 30 * day, autoRenewStatus: true, purchasedAt: t0 + Int64(n) * 30 * day),
                        latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))
                }
                _ = try await db.store.write(ResultBatch(results))
            }
            let events = try await db.rows("SELECT event_id, user_id FROM outbound_events ORDER BY id").map { ($0["event_id"] ?? "", $0["user_id"] ?? "") }
            #expect(events.count == 100)

            let hook = try WebhookHook(clockMs: t0 + 60_000)
            // Every fourth user's first request fails: its later events wait for the retry.
            hook.failuresAhead.withLock { ahead in for user in stride(from: 0, to: 20, by: 4) { ahead["u\(user)"] = 1 } }
            try await withLoopbackServer(hook.router) { port in
                let client = WebhookClient()
                var logger = Logger(label: "deliverers")
                logger.logLevel = .critical
                let endpoint = try WebhookEndpoint(name: "web", url: "http://127.0.0.1:\(port)/hook", secret: hook.secret)
                var stores: [any PollingStore] = []
                for worker in ["a", "b", "c"] { stores.append(try await db.database(worker: worker).open()) }
                var policy = DeliveryPolicy()
                policy.concurrency = 4
                let deliverers = stores.enumerated().map { index, store in
                    EventDeliverer(
                        outbox: store, endpoints: [endpoint], policy: policy, owner: "deliverer-\(index)", client: client, now: hook.now,
                        random: SplitMix64(seed: UInt64(index)), logger: logger)
                }
                func passes() async throws -> DeliveryReport {
                    try await withThrowingTaskGroup(of: DeliveryReport.self) { group in
                        for deliverer in deliverers { group.addTask { try await deliverer.deliverDue() } }
                        return try await group.reduce(DeliveryReport(), +)
                    }
                }
                let first = try await passes()
                #expect(first.added == 100, "each event added once, whichever deliverer fanned it out")
                #expect(first.retried == 5)
                #expect(first.delivered == 75, "the five failing users' four later events wait")
                hook.advance(by: 5_000)
                let second = try await passes()
                #expect(second.delivered == 25)
                #expect(second.retried == 0)

                let accepted = hook.accepted.withLock { $0 }
                #expect(accepted.count == 100)
                #expect(Set(accepted.map(\.id)).count == 100, "each event accepted once")
                for user in ids.keys {
                    #expect(accepted.filter { $0.userID == user }.map(\.id) == events.filter { $0.1 == user }.map(\.0), "\(user)")
                }
                let owners = try await db.rows("SELECT count(*) AS n FROM event_deliveries WHERE state = 'delivered'")
                #expect(owners.first?["n"] == "100")
                for store in stores { try await store.close() }
                try await client.shutdown()
            }
        }
    }

    @Test func aCommitThatWroteEventsWakesTheListeningDeliverer() async throws {
        try await withStore(.postgres) { db in
            let store = try #require(db.store as? PostgresSubscriptionStore)
            let bell = Doorbell()
            let id = try await db.insert(userID: "u", receipt: "R")
            let t0 = self.t0, day = self.day
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await store.ringOnNewEvents(bell) }
                // A hang detector: only a lost notification waits this long.
                group.addTask {
                    try await Task.sleep(for: Patience.bound)
                    throw CancellationError()
                }
                group.addTask {
                    // The first ring: listening (what was written before is to be looked at).
                    await bell.wait()
                    _ = try await db.store.write(ResultBatch([.verified(VerifiedUpdate(
                        subscriptionID: id, receiptSent: "R", state: SubscriptionState(originalTransactionID: "otid", expiresAt: t0 + day),
                        latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))]))
                    await bell.wait()
                }
                try await group.next()
                group.cancelAll()
            }
            #expect(try await db.row("SELECT count(*) AS n FROM outbound_events")?["n"] == "1")
        }
    }

    @Test func theNotificationNamesTheIdsOrTheirRange() {
        #expect(OutboxSQL.payload([7, 8, 9]) == "7,8,9")
        let many = Array(Int64(1_000_000)..<1_002_000)
        #expect(OutboxSQL.payload(many) == "1000000-1001999")
    }
}
