import EntitlementCore

extension VerifyReceiptResponse {
    /// The answer in the neutral terms the entitlement decision reads.
    public var statusAnswer: StatusAnswer {
        StatusAnswer(
            upstreamStatus: .verifyReceipt(status), bundleID: receipt?.bundleID, environment: environment,
            transactions: latestReceiptInfo.map { $0.subscriptionTransaction(environment: environment) }, renewals: pendingRenewalInfo.map(\.subscriptionRenewalInfo),
            latestReceipt: latestReceipt.flatMap { $0.isEmpty ? nil : $0 })
    }
}

extension LatestReceiptInfo {
    /// The entry in neutral terms. verifyReceipt names no price, currency or storefront (they stay
    /// unknown) and no discount type except a free trial's; its offer keys map to the Server API's
    /// offer types: a trial or introductory period 1, `promotional_offer_id` 2, `offer_code_ref_name` 3.
    func subscriptionTransaction(environment: String?) -> SubscriptionTransaction {
        var facts = TransactionFacts(environment: environment, revocationReason: cancellationReason.flatMap { Int($0) }, webOrderLineItemID: webOrderLineItemID)
        if let promotionalOfferID {
            (facts.offerType, facts.offerIdentifier) = (2, promotionalOfferID)
        } else if let offerCodeRefName {
            (facts.offerType, facts.offerIdentifier) = (3, offerCodeRefName)
        } else if isTrialPeriod || isInIntroOfferPeriod {
            facts.offerType = 1
        }
        if isTrialPeriod { facts.offerDiscountType = "FREE_TRIAL" }
        return SubscriptionTransaction(
            productID: productID, transactionID: transactionID, originalTransactionID: originalTransactionID,
            purchaseDateMs: purchaseDateMs, expiresDateMs: expiresDateMs, revocationDateMs: cancellationDateMs, isUpgraded: isUpgraded,
            ownershipType: inAppOwnershipType, facts: facts)
    }
}

extension PendingRenewalInfo {
    var subscriptionRenewalInfo: SubscriptionRenewalInfo {
        SubscriptionRenewalInfo(
            originalTransactionID: originalTransactionID, productID: productID, autoRenewProductID: autoRenewProductID,
            autoRenewStatus: autoRenewStatus, expirationIntent: expirationIntent, isInBillingRetryPeriod: isInBillingRetryPeriod,
            gracePeriodExpiresDateMs: gracePeriodExpiresDateMs)
    }
}
