import Foundation

/// The support endpoints' answers: Look Up Order ID and Get Refund History, from the same chains
/// and by the same transaction builder as the other answers.
extension ServerAPIResponseBuilder {
    /// OrderLookupResponse: `status` 0 and the order's signed transactions, or 1 (invalid) and none
    /// for an order id this app does not know (another app's, a mistyped one, one not yet issued).
    static func orderLookup(
        _ order: (subscriber: SimulatedSubscriber, chain: SimulatedChain, transaction: SimulatedChain.Transaction)?, at ms: Int64,
        configuration: PopulationConfiguration, sign: (_ payload: [String: Any]) -> String
    ) -> [String: Any] {
        guard let order else { return ["status": 1, "signedTransactions": [String]()] }
        let signed = sign(transaction(order.transaction, chain: order.chain, environment: order.subscriber.environment, bundleID: configuration.bundleID, at: ms))
        return ["status": 0, "signedTransactions": [signed]]
    }

    /// RefundHistoryResponse: the page from `offset` of the customer's refunded transactions in
    /// force at `ms` (a Family Sharing member's revoke is not their refund), by `revocationDate`
    /// ascending as Apple sorts them, 20 a page.
    static func refunds(
        _ subscriber: SimulatedSubscriber, at ms: Int64, configuration: PopulationConfiguration, offset: Int,
        sign: (_ payload: [String: Any]) -> String
    ) -> [String: Any] {
        var all: [(SimulatedChain, SimulatedChain.Transaction, Int64)] = []
        for chain in subscriber.chains where !chain.isFamilyShared {
            for t in chain.transactions where t.purchaseMs <= ms {
                if let refunded = t.refund(at: ms) { all.append((chain, t, refunded)) }
            }
        }
        all.sort { ($0.2, $0.1.transactionID) < ($1.2, $1.1.transactionID) }
        let start = min(max(offset, 0), all.count)
        let page = all[start..<min(start + pageSize, all.count)]
        return [
            "signedTransactions": page.map { chain, t, _ in
                sign(transaction(t, chain: chain, environment: subscriber.environment, bundleID: configuration.bundleID, at: ms))
            },
            "hasMore": start + page.count < all.count,
            "revision": HistoryRevision(offset: start + page.count).token,
        ]
    }
}
