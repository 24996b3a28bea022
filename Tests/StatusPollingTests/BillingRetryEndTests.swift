import AppStoreSimulator
import Foundation
import GRDB
import Logging
import PollingDemo
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import PostgresStore
@testable import SQLiteStore
@testable import StatusPolling

/// The end of billing retry: Apple retries a failed renewal for 60 days, then the subscription
/// expires with intent 2 and billing retry 0. The nightly selection keeps a row in retry due past
/// that end, so the poller hears it — on every store.
@Suite struct BillingRetryEndTests {
    static let start: Int64 = 1_780_000_000_000
    static let day: Int64 = 86_400_000

    /// Every renewal charge fails and none is recovered: each subscriber's first renewal goes into
    /// billing retry (a 16-day grace period first) and its 60 days end unrecovered.
    static let population: Population = {
        var configuration = PopulationConfiguration(
            subscribers: 12, seed: 5, startMs: start, horizonMs: start + 150 * day,
            yearlyShare: 0, proShare: 0, trialShare: 0, introOfferShare: 0, secondGroupShare: 0, sandboxShare: 0,
            churnRate: 0, billingFailureRate: 1, recoveryRate: 0, refundRate: 0, upgradeRate: 0, downgradeRate: 0, resubscribeRate: 0)
        configuration.bundleID = AppleJSON.bundleID
        return Population(configuration)
    }()

    /// 100 nights against the simulator: every row ends as Apple says (expired, intent 2, retry 0),
    /// with one audit row for the end of its retry, and is no longer selected afterwards.
    @Test(arguments: StoreKind.available) func aRetryThatEndsUnrecoveredIsRecordedAsExpired(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let simulator = AppStoreSimulator(population: Self.population, clockMs: Self.start)
            var clock = Self.start + 3 * 3_600_000
            for (user, receipt) in simulator.enrolment(at: clock) { _ = try await db.insert(userID: user, receipt: receipt) }
            try await SimulatorServer.withRunning(simulator) { endpoints in
                var configuration = VerifyReceiptTesting.configuration(endpoints.productionURL, endpoints.sandboxURL)
                configuration.sharedSecret = SharedSecret(Self.population.configuration.sharedSecret)
                try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http) { client in
                    var logger = Logger(label: "nights")
                    logger.logLevel = .critical
                    for night in 0..<100 {
                        clock = Self.start + Int64(night) * Self.day + 3 * 3_600_000
                        simulator.setClock(clock)
                        let report = await PollRun(
                            configuration: .init(bundleID: AppleJSON.bundleID, nowMs: clock), store: db.store, source: client, logger: logger
                        ).run()
                        #expect(report.failed == 0, "night \(night)")
                    }
                }
            }
            let rows = try await db.store.subscriptionsWithBookkeeping(after: 0, limit: 100)
            #expect(rows.count == 12)
            for (row, _) in rows {
                let truth = try #require(Self.population.subscriber(userID: row.userID)?.entitlement(originalTransactionID: row.state.originalTransactionID, at: clock))
                #expect(truth.state == "expired")
                #expect(row.state == TruthCheck.state(truth), "\(row.userID)")
                #expect(row.state.isInBillingRetry == false)
                #expect(row.state.expirationIntent == 2)
                let history = try await db.store.history(userID: row.userID)
                #expect(history.filter { $0.reason == SubscriptionTransition.expired.rawValue }.count == 1, "\(row.userID): \(history.map(\.reason))")
                let end = try #require(history.first { $0.reason == SubscriptionTransition.expired.rawValue })
                #expect(end.entitlementBefore == EntitlementState.billingRetry.rawValue)
                #expect(end.entitlementAfter == EntitlementState.expired.rawValue)
            }
            // Nothing left to hear: the next night selects none of them, unless it is their turn in
            // the lapsed sweep (a comeback outside the app), which does not count retry rows.
            var withoutSweep = SelectionWindows()
            withoutSweep.lapsed = nil
            #expect(try await db.store.dueSubscriptionIDs(.nightly(withoutSweep), nowMs: clock + Self.day, after: 0) == [])
        }
    }
}

/// A database the earlier selection left with rows stuck in billing retry: the upgrade's migration
/// marks them due, and the next run writes Apple's final answer and one `expired` audit row.
extension BillingRetryEndTests {
    @Test(arguments: StoreKind.available) func anExistingStuckRowIsRepairedByTheNextRun(kind: StoreKind) async throws {
        // The migration reads the real clock, so the rows are placed around it.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let stuckExpiry = now - 200 * Self.day
        let recentExpiry = now - 20 * Self.day
        let insert = """
            INSERT INTO subscriptions (user_id, latest_receipt, original_transaction_id, product_id, environment, expires_at,
                is_in_billing_retry, auto_renew_status, auto_renew_product_id, expiration_intent, last_verified_at, last_attempt_at)
            VALUES ('stuck', 'R-stuck', 'otid-stuck', 'premium.monthly', 'Production', \(stuckExpiry), 1, 1, 'premium.monthly', 2,
                       \(stuckExpiry + 59 * Self.day), \(stuckExpiry + 59 * Self.day)),
                   ('retrying', 'R-retrying', 'otid-retrying', 'premium.monthly', 'Production', \(recentExpiry), 1, 1, 'premium.monthly', 2,
                       \(now - Self.day), \(now - Self.day))
            """
        let database = try await Self.upgraded(kind, rowsBefore: insert)
        defer { Task { await database.remove() } }
        #expect(try await database.row("SELECT receipt_uploaded FROM subscriptions WHERE user_id = 'stuck'")?["receipt_uploaded"] == "1")
        #expect(try await database.row("SELECT receipt_uploaded FROM subscriptions WHERE user_id = 'retrying'")?["receipt_uploaded"] == "0")
        try await ScriptedAppStore.withServer { server, production, sandbox in
            await server.script("R-stuck", [.json(AppleJSON.valid(
                transactions: [AppleJSON.Transaction(originalTransactionID: "otid-stuck", purchaseMs: stuckExpiry - 30 * Self.day, expiresMs: stuckExpiry)],
                renewals: [AppleJSON.Renewal(originalTransactionID: "otid-stuck", expirationIntent: "2", isInBillingRetry: "0")]))])
            await server.script("R-retrying", [.json(AppleJSON.valid(
                transactions: [AppleJSON.Transaction(originalTransactionID: "otid-retrying", purchaseMs: recentExpiry - 30 * Self.day, expiresMs: recentExpiry)],
                renewals: [AppleJSON.Renewal(originalTransactionID: "otid-retrying", expirationIntent: "2", isInBillingRetry: "1")]))])
            try await VerifyReceiptClient.withClient(VerifyReceiptTesting.configuration(production, sandbox), http: VerifyReceiptTesting.http) { client in
                let report = await PollRun(configuration: .init(bundleID: AppleJSON.bundleID, nowMs: now), store: database.store, source: client, logger: Logger(label: "test")).run()
                #expect(report.selected == 2)
                #expect(report.transitions == [.expired: 1, .unchanged: 1])
            }
        }
        let stuck = try #require(try await database.row("SELECT is_in_billing_retry, expiration_intent, receipt_uploaded FROM subscriptions WHERE user_id = 'stuck'"))
        #expect(stuck == ["is_in_billing_retry": "0", "expiration_intent": "2", "receipt_uploaded": "0"])
        let history = try await database.store.history(userID: "stuck")
        #expect(history.map(\.reason) == [SubscriptionTransition.expired.rawValue])
        #expect(history.first?.entitlementBefore == EntitlementState.billingRetry.rawValue)
        #expect(history.first?.entitlementAfter == EntitlementState.expired.rawValue)
        // Repaired: the next night asks only the row still in retry.
        let due = try await database.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: now + Self.day, after: 0)
        #expect(try await database.store.subscriptions(ids: due).map(\.userID) == ["retrying"])
    }

    /// A store of `kind` at the schema before the repair, holding `rowsBefore`, then migrated.
    static func upgraded(_ kind: StoreKind, rowsBefore insert: String) async throws -> StoreUnderTest {
        switch kind {
        case .sqlite:
            return StoreUnderTest.sqlite(try TemporaryDatabase { path in
                let pool = try DatabasePool(path: path)
                try SQLiteSchema.migrator.migrate(pool, upTo: "v4: the backend that answered")
                try pool.write { db in try db.execute(sql: insert) }
                try pool.close()
            })
        case .postgres:
            let location = try await PostgresTestServer.createDatabase()
            let connector = try await PostgresConnector.connect(location, maximumConnections: 1, logger: PostgresTestServer.logger)
            _ = try await PostgresMigrator.migrate(connector, upTo: "v3: leases")
            connector.close()
            try await PostgresTestServer.execute(location, insert)
            return try await StoreUnderTest.postgres(location)
        }
    }
}
