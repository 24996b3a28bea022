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
