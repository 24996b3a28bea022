import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// How a batch of notifications is cut into rounds whose rows are read at once
/// (``NotificationMatch/rounds(_:)``): a round never holds two notifications one of which could
/// change the other's match or effect, and a refund request always starts one.
@Suite struct NotificationRoundsTests {
    static func n(
        _ id: String, chain: String?, token: String? = nil, type: String = "DID_RENEW", answerChains: [String] = []
    ) -> ReceivedNotification {
        let answer = answerChains.isEmpty ? nil : StatusAnswer(
            upstreamStatus: UpstreamStatus(backend: .notification, code: 1), bundleID: "b", environment: "Production",
            transactions: answerChains.map { SubscriptionTransaction(productID: "p", originalTransactionID: $0, expiresDateMs: 1) },
            renewals: [], scope: .oneTransaction)
        return ReceivedNotification(
            id: id, version: 2, type: type, subtype: nil, signedAtMs: 1, appleStateAtMs: 1, originalTransactionID: chain,
            appAccountToken: token, environment: .production, source: .history, receivedAtMs: 2, answer: answer)
    }

    @Test func distinctChainsAreOneRound() {
        #expect(NotificationMatch.rounds([]) == [])
        #expect(NotificationMatch.rounds([Self.n("1", chain: "A"), Self.n("2", chain: "B"), Self.n("3", chain: nil)]) == [0..<3])
    }

    @Test func aChainOrTokenNamedEarlierInTheRoundStartsTheNext() {
        #expect(NotificationMatch.rounds([Self.n("1", chain: "A"), Self.n("2", chain: "B"), Self.n("3", chain: "A"), Self.n("4", chain: "B")]) == [0..<2, 2..<4])
        #expect(NotificationMatch.rounds([Self.n("1", chain: "A", token: "t"), Self.n("2", chain: "B", token: "t")]) == [0..<1, 1..<2])
        // An answer holding chain B may enrol B's row as discovered: B's own notification waits.
        #expect(NotificationMatch.rounds([Self.n("1", chain: "A", answerChains: ["A", "B"]), Self.n("2", chain: "B"), Self.n("3", chain: "C")]) == [0..<1, 1..<3])
    }

    @Test func aRefundRequestStartsARound() {
        let batch = [Self.n("1", chain: "A"), Self.n("2", chain: "B", type: "CONSUMPTION_REQUEST"), Self.n("3", chain: "C")]
        #expect(NotificationMatch.rounds(batch) == [0..<1, 1..<3])
        #expect(NotificationMatch.rounds([Self.n("1", chain: "B", type: "CONSUMPTION_REQUEST"), Self.n("2", chain: "C")]) == [0..<2])
    }
}
