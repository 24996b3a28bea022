import EntitlementCore

/// A chain and its row as the support commands print them with `--format json`.
package struct ChainJSON: Encodable {
    package var original_transaction_id: String
    package var subscription_id: Int64?
    package var user_id: String?
    package var entitlement: String?
    package var entitled: Bool?
    package var columns: SubscriptionState?
    package var last_verified_at: String?
    package var last_error_reason: String?
    package var history: [EventJSON]

    package init(_ chain: OwnedChain, nowMs: Int64) {
        original_transaction_id = chain.originalTransactionID
        subscription_id = chain.row?.id
        user_id = chain.row?.userID
        let entitlement = chain.row?.state.entitlement(at: nowMs)
        self.entitlement = entitlement?.rawValue
        entitled = entitlement?.isEntitled
        columns = chain.row?.state
        last_verified_at = chain.bookkeeping?.lastVerifiedAt.map(Display.time)
        last_error_reason = chain.bookkeeping?.lastErrorReason
        history = chain.history.map { EventJSON($0) }
    }
}
