import AppStoreSimulator
import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// `consumption send`, `consumption list` and `history` on the real binary against the simulator:
/// what a person reads, the JSON, the exit codes; no body of Apple's in any output.
@Suite struct ConsumptionCommandLineTests {
    typealias Fixture = ConsumptionFixture

    @Test func sendAnswersTheRequestAndListAndHistoryShowIt() async throws {
        try await Fixture.with(.sqlite) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            // Signed an hour ago by the wall clock: the binary's clock is the real one.
            let signed = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
            _ = try await f.receive(f.request(id: "cr-cli", chain: chain, transaction: transaction, signedAtMs: signed))
            try await f.db.store.recordConsumptionConsent(userID: userID, consented: true, lastUsedAtMs: nil, nowMs: signed)

            let path = try #require(f.db.sqlitePath)
            let list = ["consumption", "list", "--database", path]
            let pending = try await StatusPollerProcess.launch(list + ["--pending"]).outcome()
            #expect(pending.status == 0, "\(pending.stderr)")
            #expect(pending.stdout.hasPrefix("requests 1  sent 0 (on time 0, late 0)  no consent 0  refused 0  expired 0  pending 1\ncr-cli  \(userID)  transaction \(transaction.transactionID)"), "\(pending.stdout)")

            let send = try await SupportCommandLineTests.run(f.support, ["consumption", "send"])
            #expect(send.status == 0, "\(send.stderr)")
            #expect(send.stdout == "sent 1  refused 0  no consent 0  expired 0  retried later 0  awaiting consent 0\n")
            #expect(f.simulator.consumptionAnswers.map(\.body) == [ConsumptionRequestTests.delivered])

            let again = try await SupportCommandLineTests.run(f.support, ["consumption", "send", "--format", "json"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout == #"{"awaitingConsent":0,"expired":0,"late":0,"noConsent":0,"refused":0,"retried":0,"sent":0,"skipped":0}"# + "\n")

            let json = try await StatusPollerProcess.launch(list + ["--format", "json"]).outcome()
            #expect(json.status == 0, "\(json.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(object["counts"] as? [String: Int] == ["requests": 1, "sent": 1, "on_time": 1, "late": 0, "no_consent": 0, "refused": 0, "expired": 0, "pending": 0])
            let requests = try #require(object["requests"] as? [[String: Any]])
            #expect(requests.count == 1)
            #expect(requests.first?["state"] as? String == "sent")
            #expect(requests.first?["body"] as? String == ConsumptionRequestTests.delivered)
            #expect(requests.first?["apple_status"] as? Int == 202)

            let failed = try await StatusPollerProcess.launch(list + ["--failed"]).outcome()
            #expect(failed.stdout == "requests 1  sent 1 (on time 1, late 0)  no consent 0  refused 0  expired 0  pending 0\n")
            let both = try await StatusPollerProcess.launch(list + ["--failed", "--pending"]).outcome()
            #expect(both.status == 2)

            let history = try await StatusPollerProcess.launch(["history", "--user-id", userID, "--database", path]).outcome()
            #expect(history.status == 0, "\(history.stderr)")
            #expect(history.stdout.contains("CONSUMPTION_REQUEST"), "\(history.stdout)")
            #expect(history.stdout.contains("      refund request: consumption information sent "), "\(history.stdout)")
            #expect(history.stdout.contains("(on time), preference none"), "\(history.stdout)")
        }
    }

    @Test func aBadRefundRuleStopsSendWithExitTwo() async throws {
        try await Fixture.with(.sqlite) { f in
            let path = try #require(f.db.sqlitePath)
            let config = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("consumption-\(UUID().uuidString).json")
            try #"{"consumption_refund_rules": {"1-early": {"prefer": "MAYBE"}}}"#.write(to: config, atomically: true, encoding: .utf8)
            let bad = try await SupportCommandLineTests.run(f.support, ["consumption", "send", "--config", config.path])
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("each consumption_refund_rules entry needs \"prefer\": one of DECLINE, GRANT_FULL, GRANT_PRORATED."), "\(bad.stderr)")
            #expect(f.simulator.consumptionAnswers.isEmpty)
        }
    }
}
