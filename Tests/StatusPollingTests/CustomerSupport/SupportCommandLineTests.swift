import AppStoreSimulator
import Foundation
import Testing

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
