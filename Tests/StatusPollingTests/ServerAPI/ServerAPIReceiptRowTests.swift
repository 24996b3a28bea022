import Foundation
import Logging
import Testing
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Rows enrolled with only a receipt: their ids come from the receipt, read locally.
@Suite struct ServerAPIReceiptRowTests {
    let answers: ServerAPIAnswers
    init() throws { answers = ServerAPIAnswers(pki: try TestPKI()) }

    static func receipt(bundleID: String = ServerAPIAnswers.bundle) -> String {
        let inApps = [
            ReceiptFixture.inApp(product: "com.example.premium.monthly", transaction: "1000000100", original: "1000000100", purchase: "2026-08-01T00:00:00Z", expires: "2026-09-01T00:00:00Z"),
            ReceiptFixture.inApp(product: "com.example.premium.monthly", transaction: "1000000123", original: "1000000100", purchase: "2026-09-01T00:00:00Z", expires: "2026-10-01T00:00:00Z"),
            ReceiptFixture.inApp(product: "com.example.storage.monthly", transaction: "1000000200", original: "1000000200", purchase: "2026-09-05T00:00:00Z", expires: "2026-10-05T00:00:00Z"),
        ]
        return Data(ReceiptFixture.indefiniteReceipt(ReceiptFixture.payload(bundleID: bundleID, inApps: inApps))).base64EncodedString()
    }

    func lookup(_ receipt: String, _ script: (ScriptedServerAPI) async -> Void) async throws -> (StatusLookup, [ScriptedServerAPI.Received]) {
        try await ScriptedServerAPI.withServer { server, production, sandbox in
            await script(server)
            return try await ServerAPIClient.withClient(try answers.configuration(production: production, sandbox: sandbox), jitter: { 0 }) { client in
                (try await client.status(of: ServerAPIAnswers.row(nil, receipt: receipt), logger: Logger(label: "test")), await server.received)
            }
        }
    }

    /// One request covers both chains the receipt names; the decision adopts by the usual rule.
    @Test func aNewRowAsksAboutTheChainsItsReceiptNames() async throws {
        let body = answers.statuses([answers.lastTransaction("1000000100"), answers.lastTransaction("1000000200", transaction: ["expiresDate": 1_792_000_000_000])])
        let (result, received) = try await lookup(Self.receipt()) { await $0.script("1000000100", [.json(body)]) }
        let answer = try ServerAPIClientTests.answer(result)
        #expect(received.map(\.path) == ["/production/inApps/v1/subscriptions/1000000100"])
        guard case .adopt(let state, _, let others, _) = EntitlementDecision.decide(answer: answer, row: ServerAPIAnswers.row(nil), bundleID: ServerAPIAnswers.bundle, nowMs: 1_790_000_000_000) else {
            Issue.record("rejected"); return
        }
        #expect(state.originalTransactionID == "1000000200")
        #expect(others.map(\.originalTransactionID) == ["1000000100"])
    }

    @Test func aReceiptOfAnotherAppOrNoReceiptAtAllAsksNothing() async throws {
        let (other, none) = try await lookup(Self.receipt(bundleID: "com.example.other")) { _ in }
        #expect(try ServerAPIClientTests.failure(other) == VerificationFailure(.bundleMismatch, "receipt is for bundle com.example.other, expected com.example.premium"))
        #expect(none.isEmpty)
        let (garbage, nothing) = try await lookup("bm90IGEgcmVjZWlwdA==") { _ in }
        let failure = try ServerAPIClientTests.failure(garbage)
        #expect(failure.reason == .receiptUnreadable)
        #expect(failure.detail.hasPrefix("the stored receipt could not be read for its transaction ids ("))
        #expect(nothing.isEmpty)
    }
}
