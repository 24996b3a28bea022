/// The ground truth of one subscription at one instant: what a correct poller's row holds after
/// verifying at that instant. Read from the chain's history directly, never from the JSON the
/// simulator sends, so a mistake in either shows up as a disagreement.
public struct SimulatedEntitlement: Sendable, Equatable {
    public var originalTransactionID: String
    public var productID: String
    public var environment: String
    public var expiresAtMs: Int64
    public var gracePeriodExpiresAtMs: Int64?
    public var isInBillingRetry: Bool
    public var autoRenewStatus: Bool
    public var autoRenewProductID: String
    public var expirationIntent: Int?
    public var cancelledAtMs: Int64?
    /// The effective transaction's `transaction_id`, `purchase_date_ms` and `in_app_ownership_type`.
    public var transactionID: String
    public var purchaseMs: Int64
    public var ownershipType: String
    /// The receipt Apple hands out at this instant (`latest_receipt`).
    public var latestReceipt: String
    /// active, grace_period, billing_retry, expired or refunded (a Family Sharing revoke too).
    public var state: String
    public var isEntitled: Bool { state == "active" || state == "grace_period" }
}

extension SimulatedChain {
    /// The chain's effective transaction at `ms`: the latest purchase visible then that was not
    /// upgraded away from. Not the latest expiry: an upgrade from yearly to a monthly plan starts a
    /// transaction that expires months before the upgraded one would have. A refunded transaction
    /// stays current (its refund is the chain's state); a refunded earlier one never comes back.
    public func current(at ms: Int64) -> Transaction? {
        var best: Transaction?
        for transaction in transactions where transaction.purchaseMs <= ms {
            if let upgraded = transaction.upgradedAtMs, upgraded <= ms { continue }
            if best == nil || transaction.purchaseMs >= best!.purchaseMs { best = transaction }
        }
        return best
    }

    /// Apple retrying a charge at `ms`, if it is.
    func billingRetry(at ms: Int64) -> BillingRetry? {
        billingRetries.first { $0.startMs <= ms && ms < $0.endMs }
    }

    /// `expiration_intent` at `ms`: only once the subscription has ended, and until a new charge.
    func expirationIntent(at ms: Int64) -> Int? {
        guard let current = current(at: ms), current.expiresMs <= ms else { return nil }
        guard let lapse = lapses.last(where: { $0.atMs <= ms }) else { return nil }
        let chargedSince = transactions.contains { $0.purchaseMs > lapse.atMs && $0.purchaseMs <= ms }
        return chargedSince ? nil : lapse.intent
    }

    /// The truth at `ms`, or nil before the first purchase.
    func entitlement(at ms: Int64, environment: String, latestReceipt: String) -> SimulatedEntitlement? {
        guard let current = current(at: ms) else { return nil }
        let retry = billingRetry(at: ms)
        let grace = retry?.graceEndMs.flatMap { $0 > ms ? $0 : nil }
        // A refund (or a Family Sharing revoke) of the current period, unless Apple reversed it;
        // one of an earlier period takes back no access and shows in no column.
        let refundedAt = current.refund(at: ms)
        let state: String
        if refundedAt != nil {
            state = "refunded"
        } else if current.expiresMs > ms {
            state = "active"
        } else if grace != nil {
            state = "grace_period"
        } else if retry != nil {
            state = "billing_retry"
        } else {
            state = "expired"
        }
        return SimulatedEntitlement(
            originalTransactionID: originalTransactionID, productID: current.productID, environment: environment,
            expiresAtMs: current.expiresMs, gracePeriodExpiresAtMs: grace, isInBillingRetry: retry != nil,
            autoRenewStatus: latest(autoRenew, at: ms) ?? true,
            autoRenewProductID: latest(autoRenewProduct, at: ms) ?? current.productID,
            expirationIntent: expirationIntent(at: ms), cancelledAtMs: refundedAt,
            transactionID: current.transactionID, purchaseMs: current.purchaseMs, ownershipType: ownershipType,
            latestReceipt: latestReceipt, state: state)
    }
}

extension SimulatedSubscriber {
    /// Transactions visible at `ms`, over every chain: the receipt's version.
    func receiptVersion(at ms: Int64) -> Int {
        chains.reduce(0) { total, chain in total + chain.transactions.count { $0.purchaseMs <= ms } }
    }

    /// The receipt the App Store hands out at `ms`: Apple-shaped, listing every transaction
    /// visible then, over every chain (chain by chain, in purchase order).
    public func receipt(at ms: Int64) -> String {
        receipts.receipt(version: receiptVersion(at: ms)) { makeReceipt(at: ms) }
    }

    private func makeReceipt(at ms: Int64) -> String {
        var purchases: [SimulatedReceipt.Purchase] = []
        for chain in chains {
            for transaction in chain.transactions where transaction.purchaseMs <= ms {
                purchases.append(SimulatedReceipt.Purchase(
                    productID: transaction.productID, transactionID: transaction.transactionID,
                    originalTransactionID: chain.originalTransactionID, purchaseMs: transaction.purchaseMs,
                    expiresMs: transaction.expiresMs, webOrderLineItemID: Int("9\(transaction.transactionID)") ?? 0))
            }
        }
        // The version counts the same transactions as `receiptVersion(at:)`.
        let token = ReceiptToken(environment: environment, subscriberIndex: index, version: purchases.count)
        return SimulatedReceipt(token: token, bundleID: bundleID, purchases: purchases).encoded
    }

    /// The truth of the chain `originalTransactionID` at `ms`; with nil, of the chain a new
    /// enrolment adopts: one that grants access, the latest-expiring first; when none does, the
    /// one expiring last; ties to the smaller id.
    public func entitlement(originalTransactionID: String?, at ms: Int64) -> SimulatedEntitlement? {
        let receipt = receipt(at: ms)
        let truths = chains.compactMap { $0.entitlement(at: ms, environment: environment, latestReceipt: receipt) }
        if let originalTransactionID { return truths.first { $0.originalTransactionID == originalTransactionID } }
        return truths.min { lhs, rhs in
            if lhs.isEntitled != rhs.isEntitled { return lhs.isEntitled }
            return lhs.expiresAtMs != rhs.expiresAtMs ? lhs.expiresAtMs > rhs.expiresAtMs : lhs.originalTransactionID < rhs.originalTransactionID
        }
    }

    /// Instants in (after, through] when the user bought in the app, which uploads a new receipt.
    public func inAppPurchases(after: Int64, through: Int64) -> [Int64] {
        chains.flatMap(\.inAppPurchases).filter { $0 > after && $0 <= through }.sorted()
    }

    /// Resubscriptions in (after, through] bought outside the app: the chain and the instant.
    public func resubscriptionsOutsideApp(after: Int64, through: Int64) -> [(originalTransactionID: String, atMs: Int64)] {
        chains.flatMap { chain in
            chain.purchases.filter { !$0.inApp && $0.kind == .resubscription && $0.atMs > after && $0.atMs <= through }
                .map { (chain.originalTransactionID, $0.atMs) }
        }
    }
}
