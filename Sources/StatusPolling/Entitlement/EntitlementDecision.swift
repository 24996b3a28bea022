/// The pure entitlement decision: Apple's answer + the row as it stands → the row's new contract
/// columns, or a reason to change nothing.
///
/// No I/O and no clock: everything it needs is an argument, so every case Apple can send is a unit
/// test. Whether the adopted chain already belongs to another row is checked by the store, inside
/// the write transaction, because only there can it be answered without a race.
public enum EntitlementDecision {
    /// The outcome of deciding on one status-0 answer.
    public enum Outcome: Sendable, Equatable {
        /// Write these contract columns, and this receipt when Apple sent a newer one.
        case adopt(SubscriptionState, latestReceipt: String?)
        /// Change no contract column: the answer cannot be trusted or does not concern this row.
        case reject(VerificationFailure)
    }

    /// Decides the new state of `row` from a status-0 (or 21006) answer for the app `bundleID`.
    public static func decide(
        response: VerifyReceiptResponse, row: SubscriptionRow, bundleID: String
    ) -> Outcome {
        let answeredBundle = response.receipt?.bundleID
        guard answeredBundle == bundleID else {
            return .reject(.init(.bundleMismatch, "receipt is for bundle \(answeredBundle ?? "(none)"), expected \(bundleID)"))
        }
        let chains = SubscriptionChain.chains(in: response.latestReceiptInfo)
        let chain: SubscriptionChain
        if let owned = row.state.originalTransactionID {
            guard let found = chains.first(where: { $0.originalTransactionID == owned }) else {
                return .reject(.init(.chainNotInReceipt, "original_transaction_id \(owned) is not in the answer"))
            }
            chain = found
        } else {
            // A new enrolment adopts the subscription that runs longest; ties go to the smaller id so
            // the choice never depends on the order Apple listed the entries in.
            let byExpiry = chains.sorted { lhs, rhs in
                let (left, right) = (lhs.effective.expiresDateMs ?? .min, rhs.effective.expiresDateMs ?? .min)
                return left != right ? left > right : lhs.originalTransactionID < rhs.originalTransactionID
            }
            guard let longest = byExpiry.first else {
                return .reject(.init(.noSubscriptionInReceipt, "the receipt holds no auto-renewable subscription"))
            }
            chain = longest
        }
        let renewal = response.pendingRenewalInfo.first { $0.originalTransactionID == chain.originalTransactionID }
        let effective = chain.effective
        let state = SubscriptionState(
            originalTransactionID: chain.originalTransactionID,
            productID: effective.productID,
            environment: response.environment ?? row.state.environment,
            expiresAt: effective.expiresDateMs,
            gracePeriodExpiresAt: renewal?.gracePeriodExpiresDateMs,
            isInBillingRetry: renewal?.isInBillingRetryPeriod ?? false,
            autoRenewStatus: renewal?.autoRenewStatus,
            autoRenewProductID: renewal?.autoRenewProductID,
            expirationIntent: renewal?.expirationIntent,
            cancelledAt: effective.cancellationDateMs
        )
        let newReceipt = response.latestReceipt.flatMap { $0.isEmpty ? nil : $0 }
        return .adopt(state, latestReceipt: newReceipt)
    }
}

/// The transactions of one subscription (one `original_transaction_id`) and the one that counts.
struct SubscriptionChain: Sendable, Equatable {
    var originalTransactionID: String
    var transactions: [LatestReceiptInfo]

    /// The transaction that decides access: the greatest `expires_date_ms`, leaving out transactions
    /// the user upgraded away from (`is_upgraded`). Array order is never trusted.
    var effective: LatestReceiptInfo {
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
    static func chains(in entries: [LatestReceiptInfo]) -> [SubscriptionChain] {
        var byID: [String: [LatestReceiptInfo]] = [:]
        for entry in entries {
            guard let id = entry.originalTransactionID, !id.isEmpty, entry.expiresDateMs != nil else { continue }
            byID[id, default: []].append(entry)
        }
        return byID.map { SubscriptionChain(originalTransactionID: $0.key, transactions: $0.value) }
            .sorted { $0.originalTransactionID < $1.originalTransactionID }
    }
}
