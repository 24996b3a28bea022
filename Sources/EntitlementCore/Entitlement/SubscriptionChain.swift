/// The transactions of one subscription (one `original_transaction_id`) and the one that counts.
struct SubscriptionChain: Sendable, Equatable {
    var originalTransactionID: String
    var transactions: [SubscriptionTransaction]

    /// The transaction that decides access: the greatest `expires_date_ms`, leaving out transactions
    /// the user upgraded away from (`is_upgraded`). Array order is never trusted.
    var effective: SubscriptionTransaction {
        let candidates = transactions.filter { !$0.isUpgraded }
        let pool = candidates.isEmpty ? transactions : candidates
        // `chains(in:)` only builds chains with at least one dated transaction.
        return pool.max { lhs, rhs in
            (lhs.expiresDateMs ?? .min, lhs.purchaseDateMs ?? .min, lhs.transactionID ?? "")
                < (rhs.expiresDateMs ?? .min, rhs.purchaseDateMs ?? .min, rhs.transactionID ?? "")
        }!
    }

    /// Groups subscription transactions by chain; entries without an expiry (consumables,
    /// non-renewing purchases) or without an `original_transaction_id` are not subscriptions.
    static func chains(in entries: [SubscriptionTransaction]) -> [SubscriptionChain] {
        var byID: [String: [SubscriptionTransaction]] = [:]
        for entry in entries {
            guard let id = entry.originalTransactionID, !id.isEmpty, entry.expiresDateMs != nil else { continue }
            byID[id, default: []].append(entry)
        }
        return byID.map { SubscriptionChain(originalTransactionID: $0.key, transactions: $0.value) }
            .sorted { $0.originalTransactionID < $1.originalTransactionID }
    }
}
