import StatusPolling

/// A chain and its row as the support commands print them with `--format json`.
struct ChainJSON: Encodable {
    var original_transaction_id: String
    var subscription_id: Int64?
    var user_id: String?
    var entitlement: String?
    var entitled: Bool?
    var columns: SubscriptionState?
    var last_verified_at: String?
    var last_error_reason: String?
    var history: [EventJSON]

    init(_ chain: OwnedChain, nowMs: Int64) {
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
