extension SubscriptionState {
    /// Takes the columns a transaction gives (its id, product, period, revocation, ownership and
    /// commitment) from `other`: what a later period, or a newer signing of the row's own, changes.
    mutating func takeTransaction(from other: SubscriptionState) {
        transactionID = other.transactionID
        productID = other.productID
        expiresAt = other.expiresAt
        purchasedAt = other.purchasedAt
        cancelledAt = other.cancelledAt
        ownershipType = other.ownershipType
        billingPlanType = other.billingPlanType
        commitmentPeriod = other.commitmentPeriod
        commitmentPeriods = other.commitmentPeriods
        commitmentExpiresAt = other.commitmentExpiresAt
    }

    /// Takes the columns the renewal info gives (and the environment) from `other`: what newer
    /// Apple data changes, whichever period its message is about.
    mutating func takeRenewalInfo(from other: SubscriptionState) {
        environment = other.environment
        gracePeriodExpiresAt = other.gracePeriodExpiresAt
        isInBillingRetry = other.isInBillingRetry
        autoRenewStatus = other.autoRenewStatus
        autoRenewProductID = other.autoRenewProductID
        expirationIntent = other.expirationIntent
        renewalBillingPlanType = other.renewalBillingPlanType
    }

    /// The renewal columns of a chain Apple answered without renewal info: what the row held of
    /// this chain (`held`; nothing for a chain it does not hold) stays, since Apple did not say
    /// otherwise, except what Apple's `status` says — in billing retry (3), in a grace period (4:
    /// billing retry too, and the row's grace expiry, if any, stands), or neither (1, 2, 5). A
    /// grace period Apple names without its expiry leaves the row disagreeing with Apple's status,
    /// which asks Apple again rather than guess a date.
    mutating func takeRenewalInfo(withoutRenewalInfo status: AppleSubscriptionStatus?, held: SubscriptionState?) {
        gracePeriodExpiresAt = held?.gracePeriodExpiresAt
        isInBillingRetry = held?.isInBillingRetry ?? false
        autoRenewStatus = held?.autoRenewStatus
        autoRenewProductID = held?.autoRenewProductID
        expirationIntent = held?.expirationIntent
        renewalBillingPlanType = held?.renewalBillingPlanType
        switch status {
        case .billingRetry?:
            isInBillingRetry = true
            gracePeriodExpiresAt = nil
        case .gracePeriod?:
            isInBillingRetry = true
        case .active?, .expired?, .revoked?:
            isInBillingRetry = false
            gracePeriodExpiresAt = nil
        case nil:
            break
        }
    }

    /// Whether `self` differs from `old` only by the transaction's identity appearing
    /// (`transaction_id`, `purchased_at`, `in_app_ownership_type`, and the commitment columns,
    /// from NULL): a row verified before those columns were kept learns them on its next answer,
    /// which is no change to record.
    func onlyGainsTransactionIdentity(from old: SubscriptionState) -> Bool {
        guard old.transactionID == nil, old.purchasedAt == nil, old.ownershipType == nil, old.billingPlanType == nil,
            old.renewalBillingPlanType == nil
        else { return false }
        var filled = old
        filled.transactionID = transactionID
        filled.purchasedAt = purchasedAt
        filled.ownershipType = ownershipType
        filled.billingPlanType = billingPlanType
        filled.commitmentPeriod = commitmentPeriod
        filled.commitmentPeriods = commitmentPeriods
        filled.commitmentExpiresAt = commitmentExpiresAt
        filled.renewalBillingPlanType = renewalBillingPlanType
        return filled == self
    }
}
