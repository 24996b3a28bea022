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
