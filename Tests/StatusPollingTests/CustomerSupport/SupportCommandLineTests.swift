import AppStoreSimulator
import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The support commands on the real binary against the simulator: what a person reads, the JSON,
/// and the exit codes.
@Suite struct SupportCommandLineTests {
    typealias Fixture = SupportFixture

    /// The Server API's options for `f`'s simulator, with its root and key as files beside the database.
    static func arguments(_ f: Fixture) throws -> (arguments: [String], environment: [String: String]) {
        let path = try #require(f.db.sqlitePath)
        let root = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("support-root-\(UUID().uuidString).pem")
        try f.simulator.pki.rootCertificatePEM.write(to: root, atomically: true, encoding: .utf8)
        let key = f.simulator.serverAPIKey
        return ([
            "--database", path, "--bundle-id", f.bundleID, "--app-apple-id", String(f.simulator.population.configuration.appAppleID),
            "--issuer-id", key.issuerID, "--key-id", key.keyID, "--server-api-url", f.endpoints.serverAPIURL,
            "--server-api-sandbox-url", f.endpoints.serverAPISandboxURL, "--trusted-root-file", root.path,
        ], ["APPSTORE_PRIVATE_KEY": key.privateKeyPEM])
    }

    static func run(_ f: Fixture, _ command: [String]) async throws -> StatusPollerProcess.Outcome {
        let (arguments, environment) = try Self.arguments(f)
        return try await StatusPollerProcess.launch(command + arguments, environment: environment).outcome()
    }

    @Test func lookupPrintsTheOrderAndTheRowAndExitsOneForAnUnknownOrder() async throws {
        try await Fixture.with(.sqlite) { f in
            let clock = Fixture.start
            let (subscriber, chain) = try #require(f.activePaid(at: clock))
            let current = try #require(chain.current(at: clock))
            let orderID = try #require(f.simulator.orderID(ofTransaction: current.transactionID))
            let row = try await f.row(owning: chain.originalTransactionID)
            let now = ["--now", "2026-09-21T15:00:00Z"]

            let text = try await Self.run(f, ["lookup", "--order-id", orderID] + now)
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("order \(orderID): 1 transaction(s) signed by Apple, verified (Production)"), "\(text.stdout)")
            #expect(text.stdout.contains("transaction \(current.transactionID) of chain \(chain.originalTransactionID)  \(current.productID)"))
            #expect(text.stdout.contains("subscription \(row.id)  user \(subscriber.userID)  →  active, ENTITLED at 2026-09-21 15:00:00"), "\(text.stdout)")
            #expect(text.stdout.contains("recent history (newest first):"))
            // Never a signed body.
            #expect(!text.stdout.contains("eyJ"))
            #expect(!text.stderr.contains("eyJ"))

            let json = try await Self.run(f, ["lookup", "--transaction-id", current.transactionID, "--format", "json"] + now)
            #expect(json.status == 0, "\(json.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(object["found"] as? Bool == true)
            let chains = try #require(object["chains"] as? [[String: Any]])
            #expect(chains.count == 1)
            #expect(chains[0]["user_id"] as? String == subscriber.userID)
            #expect(chains[0]["subscription_id"] as? Int == Int(row.id))
            #expect(chains[0]["entitled"] as? Bool == true)
            let transactions = try #require(object["transactions"] as? [[String: Any]])
            #expect(transactions.first?["transaction_id"] as? String == current.transactionID)
            #expect(transactions.first?["expires_date_ms"] as? Int64 == current.expiresMs)

            let unknown = try await Self.run(f, ["lookup", "--order-id", "MZZZZZZZZZ"])
            #expect(unknown.status == 1)
            #expect(unknown.stdout.contains("order MZZZZZZZZZ: not found"))
            #expect(unknown.stderr.contains("Apple knows no order MZZZZZZZZZ for this app, in production or the sandbox"))

            let both = try await Self.run(f, ["lookup", "--order-id", orderID, "--transaction-id", "1"])
            #expect(both.status == 2)
            #expect(both.stderr.contains("give exactly one of --order-id and --transaction-id."))

            let refunds = try await Self.run(f, ["refunds", "--user-id", subscriber.userID])
            #expect(refunds.status == 0, "\(refunds.stderr)")
            #expect(refunds.stdout.hasPrefix("0 refund(s) in Apple's history."), "\(refunds.stdout)")
            let nobody = try await Self.run(f, ["refunds", "--user-id", "nobody"])
            #expect(nobody.status == 1)
            #expect(nobody.stderr.contains("user nobody has no row with an original transaction id yet"))
        }
    }
}

extension SupportCommandLineTests {
    /// `refunds` shows, beside each refund Apple lists, what the ledger holds of it: a current
    /// period's refund the night's poll brought (revoked when, first seen by whom, its price), an
    /// earlier period's the poll never saw as "not in the ledger".
    @Test func refundsShowWhatTheLedgerHolds() async throws {
        try await Fixture.with(.sqlite, population: OrderLookupTests.mixed) { f in
            let clock = Fixture.start
            let (_, chain) = try #require(f.subscriber { _, chain in
                !chain.isFamilyShared && chain.current(at: clock)?.refund(at: clock) != nil
            })
            let refunded = try #require(chain.current(at: clock))
            let revoked = try #require(refunded.refund(at: clock))
            let price = Display.milliunits(Int64(SimulatedOffer.price(refunded, in: chain)))
            let text = try await Self.run(f, ["refunds", "--original-transaction-id", chain.originalTransactionID])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains(
                "ledger: revoked \(Display.time(revoked)) (REFUND_FULL), first seen by poll \(Display.time(clock)), price \(price) \(Storefront.of(chain).currency)"), "\(text.stdout)")
            let earlier = chain.transactions.filter { $0.transactionID != refunded.transactionID && $0.purchaseMs <= clock && $0.refund(at: clock) != nil }
            #expect(text.stdout.components(separatedBy: "ledger: not in the ledger").count - 1 == earlier.count, "\(text.stdout)")

            let json = try await Self.run(f, ["refunds", "--original-transaction-id", chain.originalTransactionID, "--format", "json"])
            #expect(json.status == 0, "\(json.stderr)")
            let lines = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            let line = try #require(lines.first { ($0["transaction"] as? [String: Any])?["transaction_id"] as? String == refunded.transactionID })
            let ledger = try #require(line["ledger"] as? [String: Any])
            #expect(ledger["revoked_at_ms"] as? Int64 == revoked)
            #expect(ledger["first_source"] as? String == "poll")
            #expect(ledger["price"] as? Int64 == Int64(SimulatedOffer.price(refunded, in: chain)))
            #expect(line["row"] as? String == "reflected")
        }
    }

    @Test func displayShowsMilliunitsExactly() {
        #expect(Display.milliunits(10_990) == "10.99")
        #expect(Display.milliunits(1_200_000) == "1200")
        #expect(Display.milliunits(5) == "0.005")
        #expect(Display.milliunits(-4_500) == "-4.5")
        #expect(Display.milliunits(0) == "0")
    }

    @Test func extendExplainsRefusalsAndFollowsAMassRequest() async throws {
        try await Fixture.with(.sqlite) { f in
            let t = Fixture.start + Fixture.day
            f.simulator.setClock(t)
            let (subscriber, chain) = try #require(f.activePaid(at: t))
            let current = try #require(chain.current(at: t))
            let row = try await f.row(owning: chain.originalTransactionID)
            let now = ["--now", "2026-09-21T15:00:00Z"]

            let one = try await Self.run(f, ["extend", "--original-transaction-id", chain.originalTransactionID, "--days", "3", "--reason", "service-issue", "--request-id", "r-1"] + now)
            #expect(one.status == 0, "\(one.stderr)")
            let expiry = current.expiresMs + 3 * Fixture.day
            #expect(one.stdout.contains("Apple extended \(chain.originalTransactionID) by 3 day(s) (Production, request r-1): the period now ends \(Self.time(expiry))."), "\(one.stdout)")
            #expect(one.stdout.contains("Subscription \(row.id) (user \(subscriber.userID)): Apple's signed status written (extended); expires_at \(Self.time(expiry))."))
            #expect(try await f.row(owning: chain.originalTransactionID).state.expiresAt == expiry)

            let tooMany = try await Self.run(f, ["extend", "--original-transaction-id", chain.originalTransactionID, "--days", "91", "--reason", "3"])
            #expect(tooMany.status == 2)
            #expect(tooMany.stderr.contains("--days must be 1 to 90 (Apple's limit), got 91."))
            let (_, expired) = try #require(f.subscriber { s, c in s.entitlement(originalTransactionID: c.originalTransactionID, at: t)?.state == "expired" })
            let refused = try await Self.run(f, ["extend", "--original-transaction-id", expired.originalTransactionID, "--days", "3", "--reason", "other", "--format", "json"])
            #expect(refused.status == 1)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(refused.stdout.utf8)) as? [String: Any])
            #expect(object["extended"] as? Bool == false)
            #expect(object["apple_error"] as? Int == 4_030_004)

            let id = "758883e8-151b-47b7-abd0-60c4d804c2f5"
            let mass = try await Self.run(f, ["extend", "--all", "--product", "premium.monthly", "--days", "2", "--reason", "service-issue", "--request-id", id] + now)
            #expect(mass.status == 0, "\(mass.stderr)")
            #expect(mass.stdout.contains("Apple took mass extension \(id): premium.monthly +2 day(s) for every active subscriber (Production)."))
            let again = try await Self.run(f, ["extend", "--all", "--product", "premium.monthly", "--days", "2", "--reason", "service-issue", "--request-id", id] + now)
            #expect(again.status == 0)
            #expect(again.stdout.contains("already; nothing sent"))
            let inProgress = try await Self.run(f, ["extend", "status"] + now)
            #expect(inProgress.status == 0, "\(inProgress.stderr)")
            #expect(inProgress.stdout.contains("\(id)  premium.monthly +2d  Production  requested 2026-09-21 15:00:00  in_progress"), "\(inProgress.stdout)")
            // The nightly run asks too, before its poll.
            f.simulator.setClock(t + AppStoreSimulator.massExtensionDurationMs + Fixture.minute)
            let night = try await Self.run(f, ["run", "--backend", "server-api", "--report", "json"] + now)
            #expect([0, 1].contains(night.status), "\(night.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(night.stdout.utf8)) as? [String: Any])
            let catchUp = try #require(report["catch_up"] as? [String: Any], "\(night.stdout)")
            #expect(catchUp["mass_extensions_checked"] as? Int == 1)
            #expect(catchUp["mass_extensions_completed"] as? Int == 1)
            let recorded = try await f.db.row("SELECT completed_at, succeeded_count FROM renewal_extensions")
            #expect(recorded?["completed_at"] == String(t + AppStoreSimulator.massExtensionDurationMs))
            let complete = try await Self.run(f, ["extend", "status", "--format", "json"] + now)
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(complete.stdout.utf8)) as? [[String: Any]])
            #expect(rows.first?["state"] as? String == "complete")
            let extended = f.simulator.population.subscribers.flatMap(\.chains).filter { $0.extensions.contains { $0.requestIdentifier == id } }.count
            #expect(rows.first?["succeeded"] as? Int == extended)
            #expect(recorded?["succeeded_count"] == String(extended))
            #expect(extended > 0)
        }
    }

    static func time(_ ms: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
