/// The pure entitlement decision: a backend's answer, normalised + the row as it stands → the row's
/// new contract columns, or a reason to change nothing. Every backend decides through it.
///
/// No I/O and no clock: everything it needs is an argument, so every case Apple can send is a unit
/// test. Whether the adopted chain already belongs to another row is checked by the store, inside
/// the write transaction, because only there can it be answered without a race.
public enum EntitlementDecision {
    /// The outcome of deciding on one answer.
    public enum Outcome: Sendable, Equatable {
        /// Write these contract columns, and this receipt when Apple sent a newer one. For a row
        /// that owns no chain yet, `otherChains` are the receipt's other subscriptions in order of
        /// preference: the store adopts the first chain no other row owns and records the rest.
        /// `evidence` says what else the answer knows of the adopted (or owned) chain.
        case adopt(SubscriptionState, latestReceipt: String?, otherChains: [SubscriptionState] = [], evidence: ChainEvidence = ChainEvidence())
        /// Change no contract column: the answer cannot be trusted or does not concern this row.
        case reject(VerificationFailure)
    }

    /// Decides the new state of `row` from an answer for the app `bundleID`. `nowMs` is the run's
    /// clock: a new row prefers a chain that grants access then (nil: by expiry alone).
    public static func decide(answer: StatusAnswer, row: SubscriptionRow, bundleID: String, nowMs: Int64? = nil) -> Outcome {
        let answeredBundle = answer.bundleID
        guard answeredBundle == bundleID else {
            return .reject(.init(.bundleMismatch, "receipt is for bundle \(answeredBundle ?? "(none)"), expected \(bundleID)"))
        }
        let chains = SubscriptionChain.chains(in: answer.transactions)
        if let owned = row.state.originalTransactionID {
            guard let chain = chains.first(where: { $0.originalTransactionID == owned }) else {
                return .reject(.init(.chainNotInReceipt, "original_transaction_id \(owned) is not in the answer"))
            }
            return .adopt(state(of: chain, answer: answer, row: row), latestReceipt: answer.latestReceipt, evidence: evidence(of: chain, answer: answer))
        }
        // A new enrolment: every chain of the receipt, the preferred first.
        let candidates = chains.map { state(of: $0, answer: answer, row: row) }.sorted { preferred($0, over: $1, nowMs: nowMs) }
        guard let first = candidates.first else {
            return .reject(.init(.noSubscriptionInReceipt, "the receipt holds no auto-renewable subscription"))
        }
        let adopted = chains.first { $0.originalTransactionID == first.originalTransactionID }!
        return .adopt(first, latestReceipt: answer.latestReceipt, otherChains: Array(candidates.dropFirst()), evidence: evidence(of: adopted, answer: answer))
    }

    /// The adoption rule for a new row: a chain that grants access at the run's clock (not
    /// refunded; expiry or grace period ahead), the latest-expiring first; when none does, the
    /// chain whose effective transaction expires last. Ties go to the smaller id, so the choice
    /// never depends on the order Apple listed the entries in.
    static func preferred(_ lhs: SubscriptionState, over rhs: SubscriptionState, nowMs: Int64?) -> Bool {
        if let nowMs {
            let (left, right) = (lhs.entitlement(at: nowMs).isEntitled, rhs.entitlement(at: nowMs).isEntitled)
            if left != right { return left }
        }
        let (left, right) = (lhs.expiresAt ?? .min, rhs.expiresAt ?? .min)
        if left != right { return left > right }
        return (lhs.originalTransactionID ?? "") < (rhs.originalTransactionID ?? "")
    }

    /// What `answer` knows of `chain` beyond its columns: its scope, Apple's status, and the
    /// periods other than the effective one Apple revoked (an upgrade's old period is dated too,
    /// but is no refund).
    static func evidence(of chain: SubscriptionChain, answer: StatusAnswer) -> ChainEvidence {
        let effective = chain.effective
        let revoked = chain.transactions.compactMap { transaction -> RevokedTransaction? in
            guard let revokedAt = transaction.revocationDateMs, !transaction.isUpgraded, transaction != effective else { return nil }
            return RevokedTransaction(transactionID: transaction.transactionID, productID: transaction.productID, revokedAtMs: revokedAt)
        }
        return ChainEvidence(
            scope: answer.scope, revokedPeriods: revoked.sorted { ($0.revokedAtMs, $0.transactionID ?? "") < ($1.revokedAtMs, $1.transactionID ?? "") },
            isUpgraded: answer.scope == .oneTransaction && effective.isUpgraded, appleStatus: answer.subscriptionStatus)
    }

    /// The contract columns `chain` and its renewal info give.
    private static func state(of chain: SubscriptionChain, answer: StatusAnswer, row: SubscriptionRow) -> SubscriptionState {
        let renewal = answer.renewals.first { $0.originalTransactionID == chain.originalTransactionID }
        let effective = chain.effective
        var state = SubscriptionState(
            originalTransactionID: chain.originalTransactionID,
            productID: effective.productID,
            environment: answer.environment ?? row.state.environment,
            expiresAt: effective.expiresDateMs,
            gracePeriodExpiresAt: renewal?.gracePeriodExpiresDateMs,
            isInBillingRetry: renewal?.isInBillingRetryPeriod ?? false,
            autoRenewStatus: renewal?.autoRenewStatus,
            autoRenewProductID: renewal?.autoRenewProductID,
            expirationIntent: renewal?.expirationIntent,
            cancelledAt: effective.revocationDateMs,
            transactionID: effective.transactionID,
            purchasedAt: effective.purchaseDateMs,
            ownershipType: effective.ownershipType,
            billingPlanType: effective.commitment?.billingPlanType,
            commitmentPeriod: effective.commitment?.billingPeriod,
            commitmentPeriods: effective.commitment?.billingPeriods,
            commitmentExpiresAt: effective.commitment?.expiresAtMs,
            renewalBillingPlanType: renewal?.renewalBillingPlanType
        )
        if renewal == nil, let missing = answer.missingRenewals.first(where: { $0.originalTransactionID == chain.originalTransactionID }) {
            let held = row.state.originalTransactionID == chain.originalTransactionID ? row.state : nil
            state.takeRenewalInfo(withoutRenewalInfo: missing.appleStatus, held: held)
        }
        return state
    }
}
