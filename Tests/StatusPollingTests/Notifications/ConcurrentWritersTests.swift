import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Notifications and a nightly run writing the same rows, on every store (PostgreSQL with the run's
/// rows leased): whichever writes last, the newer Apple data wins — no lost update, no busy error.
@Suite struct ConcurrentWritersTests {
    typealias Server = ReceiverServerTests
    static let night: Int64 = 1_790_000_000_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000
    /// What the poll hears: renewed for a month.
    static let polled = night + 30 * day
    /// What a newer notification says: renewed for two.
    static let notified = night + 60 * day

    @Test(arguments: StoreKind.available) func theNewerAppleDataWinsWhicheverWritesLast(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let rows = 24
            var ids: [Int64] = []
            for index in 0..<rows {
                let chain = "\(5_000_000 + index)"
                ids.append(try await db.insert(userID: "u\(index)", receipt: "R\(index)", SubscriptionState(
                    originalTransactionID: chain, productID: "premium.monthly", environment: "Production", expiresAt: Self.night + 5 * Self.hour,
                    autoRenewStatus: true, autoRenewProductID: "premium.monthly")))
            }
            // Even rows get a notification signed an hour after the night's poll, odd rows one
            // signed an hour before it; the first third arrive before the run, the second during it,
            // the last after it. Each is about the period the poll hears of (the same transaction,
            // signed at another instant: a renewal date extension, say), so only the instant decides.
            func body(_ index: Int) throws -> [UInt8] {
                let newer = index % 2 == 0, chain = "\(5_000_000 + index)"
                return Array(try JSONSerialization.data(withJSONObject: Server.signed(
                    pki, uuid: "n-\(index)", chain: chain, signedAt: Self.night + (newer ? Self.hour : -Self.hour),
                    expires: newer ? Self.notified : Self.night + 5 * Self.hour, transaction: ["transactionId": "\(chain)9", "purchaseDate": Self.night])))
            }
            let receiver = Server.receiver(db.store, pki: pki, now: Self.night + 2 * Self.hour)
            var replies: [Int: NotificationReceiver.Reply] = [:]
            for index in 0..<8 { replies[index] = await receiver.receive(try body(index)) }

            let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            let report = try await ScriptedAppStore.withServer { server, production, sandbox in
                for index in 0..<rows {
                    let chain = "\(5_000_000 + index)"
                    await server.script("R\(index)", [.delayed(.milliseconds(20), .json(AppleJSON.valid(latestReceipt: nil, transactions: [
                        AppleJSON.Transaction(originalTransactionID: chain, transactionID: "\(chain)9", purchaseMs: Self.polled - 30 * Self.day, expiresMs: Self.polled),
                    ], renewals: [AppleJSON.Renewal(originalTransactionID: chain)])))])
                }
                let configuration = VerifyReceiptTesting.configuration(production, sandbox, timeout: .seconds(60))
                return try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http) { client in
                    // Every row in a window is asked, fresh or not: the older notifications must meet a poll.
                    let job = PollJob.Configuration(
                        selection: .nightly(SelectionWindows(freshWithin: nil)), bundleID: AppleJSON.bundleID, nowMs: Self.night, concurrency: 4,
                        handlesSignals: false, showsProgress: false)
                    let database = db.database(worker: "night")
                    async let run = PollJob(configuration: job, database: database, source: client, logger: logger).run()
                    var during: [Int: NotificationReceiver.Reply] = [:]
                    for index in 8..<16 { during[index] = await receiver.receive(try body(index)) }
                    let report = await run.report
                    replies.merge(during) { $1 }
                    return report
                }
            }
            for index in 16..<rows { replies[index] = await receiver.receive(try body(index)) }

            #expect(report?.failed == 0)
            // A row renewed by a notification before the run selected its rows left the near-expiry
            // window: the four renewed before the run, and any of the four renewed during it.
            let selected = try #require(report?.selected)
            #expect((16...20).contains(selected), "\(selected)")
            #expect(report?.verified == selected)
            for index in 0..<rows {
                guard case .accepted(let outcome, _, _)? = replies[index] else {
                    Issue.record("notification \(index): \(String(describing: replies[index]))")
                    continue
                }
                if index < 8 { #expect(outcome == .applied, "\(index)") }
                if index >= 16 { #expect(outcome == (index % 2 == 0 ? .applied : .stale), "\(index)") }
                let row = try #require(try await db.store.subscription(id: ids[index]))
                let newer = index % 2 == 0
                #expect(row.state.expiresAt == (newer ? Self.notified : Self.polled), "\(index)")
                #expect(row.state.productID == (newer ? "com.example.premium.monthly" : "premium.monthly"), "\(index)")
                #expect(try await db.row("SELECT apple_state_at FROM subscriptions WHERE id = \(ids[index])") == [
                    "apple_state_at": "\(newer ? Self.night + Self.hour : Self.night)"
                ], "\(index)")
            }
            if kind == .postgres {
                #expect(try await db.row("SELECT count(*) AS n FROM subscriptions WHERE lease_run IS NOT NULL") == ["n": "0"])
            }
        }
    }
}
