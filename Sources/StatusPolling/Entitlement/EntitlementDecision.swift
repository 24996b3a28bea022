/// The pure entitlement decision: a backend's answer, normalised + the row as it stands → the row's
/// new contract columns, or a reason to change nothing. Every backend decides through it.
///
/// No I/O and no clock: everything it needs is an argument, so every case Apple can send is a unit
/// test. Whether the adopted chain already belongs to another row is checked by the store, inside
/// the write transaction, because only there can it be answered without a race.
public enum EntitlementDecision {
    /// The outcome of deciding on one answer.
    public enum Outcome: Sendable, Equatable {
        /// Write these contract columns, and this receipt when Apple sent a newer one.
        case adopt(SubscriptionState, latestReceipt: String?)
        /// Change no contract column: the answer cannot be trusted or does not concern this row.
        case reject(VerificationFailure)
    }

    /// Decides the new state of `row` from an answer for the app `bundleID`.
    public static func decide(answer: StatusAnswer, row: SubscriptionRow, bundleID: String) -> Outcome {
        let answeredBundle = answer.bundleID
        guard answeredBundle == bundleID else {
            return .reject(.init(.bundleMismatch, "receipt is for bundle \(answeredBundle ?? "(none)"), expected \(bundleID)"))
        }
        let chains = SubscriptionChain.chains(in: answer.transactions)
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
        let renewal = answer.renewals.first { $0.originalTransactionID == chain.originalTransactionID }
        let effective = chain.effective
        let state = SubscriptionState(
            originalTransactionID: chain.originalTransactionID,
            productID: effective.productID,
            environment: answer.environment ?? row.state.environment,
            expiresAt: effective.expiresDateMs,
            gracePeriodExpiresAt: renewal?.gracePeriodExpiresDateMs,
            isInBillingRetry: renewal?.isInBillingRetryPeriod ?? false,
            autoRenewStatus: renewal?.autoRenewStatus,
            autoRenewProductID: renewal?.autoRenewProductID,
            expirationIntent: renewal?.expirationIntent,
            cancelledAt: effective.revocationDateMs
        )
        return .adopt(state, latestReceipt: answer.latestReceipt)
    }
}
