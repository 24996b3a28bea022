import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Which chain a new row adopts, and where a receipt's other subscriptions go: through a real run,
/// the scripted App Store and each store (SQLite, PostgreSQL). A receipt replayed by another user is never granted.
@Suite struct AdoptionTests {
    typealias T = AppleJSON.Transaction
    typealias R = AppleJSON.Renewal
    let t0 = AppleJSON.t0
    let day = AppleJSON.day
    var now: Int64 { t0 + 10 * day }

    /// One subscription live and renewing (A), one refunded and expiring 170 s after it (B).
    var twoChains: String {
        AppleJSON.valid(latestReceipt: "APPLE-LATEST", transactions: [
            T(productID: "premium.yearly", originalTransactionID: "1000000777", transactionID: "2000000777",
              expiresMs: t0 + 30 * day + 170_000, cancellationMs: t0 + 2 * day, groupID: "B"),
            T(productID: "premium.monthly", originalTransactionID: "1000000001", transactionID: "2000000001", expiresMs: t0 + 30 * day, groupID: "A"),
        ], renewals: [R(), R(originalTransactionID: "1000000777", productID: "premium.yearly", autoRenewProductID: "premium.yearly", autoRenewStatus: "0")])
    }

    func poll(_ db: StoreUnderTest, _ production: String, _ sandbox: String, concurrency: Int = 4, batchSize: Int = 100) async throws -> RunReport {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = VerifyReceiptTesting.configuration(production, sandbox, timeout: .seconds(60))
        return try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http, jitter: { 0.5 }) { client in
            await PollRun(
                configuration: .init(bundleID: AppleJSON.bundleID, nowMs: now, concurrency: concurrency, batchSize: batchSize),
                store: db.store, source: client, logger: logger
            ).run()
        }
    }

    /// Every row, with its entitlement at the run's clock (the view's computation, at `now`).
    func rows(_ db: StoreUnderTest) async throws -> [(user: String, otid: String?, entitlement: String)] {
        try await db.store.subscriptionsWithBookkeeping(after: 0, limit: 1000).map { row, _ in
            (row.userID, row.state.originalTransactionID, row.state.entitlement(at: now).rawValue)
        }
    }

    @Test(arguments: StoreKind.available) func aNewRowAdoptsTheLiveChainAndTheRefundedOneIsEnrolledForTheSameUser(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let id = try await db.insert(userID: "alice", receipt: "R-two")
                await server.script("R-two", [.json(twoChains)])
                let report = try await poll(db, production, sandbox)
                #expect(report.verified == 1)
                #expect(report.discovered == 1)
                #expect(report.transitions == [.firstVerified: 1])
                let all = try await rows(db)
                #expect(all.map(\.user) == ["alice", "alice"])
                #expect(all.map(\.otid) == ["1000000001", "1000000777"])
                #expect(all.map(\.entitlement) == ["active", "refunded"])
                #expect(try await db.rawRow(id)?["latest_receipt"] == "APPLE-LATEST")
                let discovered = try #require(try await db.row("SELECT * FROM subscriptions WHERE id <> \(id)"))
                #expect(discovered["latest_receipt"] == "APPLE-LATEST")
                #expect(discovered["last_verified_at"] == "\(now)")
                #expect(discovered["cancelled_at"] == "\(t0 + 2 * day)")
                #expect(try await db.store.history(userID: "alice").map(\.reason).reversed() == ["first_verified", "discovered"])
                #expect(report.text().contains("discovered 1  (other subscriptions in new receipts, enrolled as rows of the same user)"))
            }
        }
    }

    @Test(arguments: StoreKind.available, [100, 1]) func racingEnrolmentsOfOneReceiptAreNeverBothGranted(kind: StoreKind, batchSize: Int) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                // Two users upload the same receipt; verified at once, in one batch or two.
                _ = try await db.insert(userID: "alice", receipt: "R-two")
                _ = try await db.insert(userID: "mallory", receipt: "R-two-replayed")
                await server.script("R-two", [.json(twoChains)])
                await server.script("R-two-replayed", [.json(twoChains)])
                let report = try await poll(db, production, sandbox, concurrency: 2, batchSize: batchSize)
                #expect(report.failedByReason == [.conflict: 1])
                #expect(report.verified == 1)
                let all = try await rows(db)
                // One user owns both chains; the other holds nothing.
                let owners = Set(all.filter { $0.otid != nil }.map(\.user))
                #expect(owners.count == 1)
                #expect(all.filter { $0.otid != nil }.count == 2)
                #expect(all.filter { $0.otid == nil }.map(\.entitlement) == ["unverified"])
            }
        }
    }

    @Test(arguments: StoreKind.available) func whenTheLiveChainIsOwnedTheNewRowTakesTheNextUnownedOne(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                // A second account on the same device bought the yearly plan: its receipt also
                // holds the monthly chain, which another row already owns.
                let earlier = try await db.insert(userID: "bob", receipt: "R-bob", SubscriptionState(
                    originalTransactionID: "1000000001", productID: "premium.monthly", environment: "Production", expiresAt: t0 + 200 * day))
                _ = try await db.insert(userID: "carol", receipt: "R-carol")
                let live = AppleJSON.valid(transactions: [
                    T(productID: "premium.yearly", originalTransactionID: "1000000777", transactionID: "2000000777", expiresMs: t0 + 365 * day, groupID: "B"),
                    T(productID: "premium.monthly", originalTransactionID: "1000000001", transactionID: "2000000001", expiresMs: t0 + 400 * day, groupID: "A"),
                ], renewals: [])
                await server.script("R-carol", [.json(live)])
                let report = try await poll(db, production, sandbox)
                #expect(report.verified == 1)
                #expect(report.discovered == 0)
                let all = try await rows(db)
                #expect(all.map(\.user) == ["bob", "carol"])
                #expect(all.map(\.otid) == ["1000000001", "1000000777"])
                // Bob's row was not selected (far from expiry) and is untouched.
                #expect(try await db.rawRow(earlier)?["expires_at"] == "\(t0 + 200 * day)")
            }
        }
    }
}
