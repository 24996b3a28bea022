import EntitlementCore

extension VerifyReceiptResponse {
    /// The answer in the neutral terms the entitlement decision reads.
    public var statusAnswer: StatusAnswer {
        StatusAnswer(
            upstreamStatus: .verifyReceipt(status), bundleID: receipt?.bundleID, environment: environment,
            transactions: latestReceiptInfo.map(\.subscriptionTransaction), renewals: pendingRenewalInfo.map(\.subscriptionRenewalInfo),
            latestReceipt: latestReceipt.flatMap { $0.isEmpty ? nil : $0 })
    }
}

extension LatestReceiptInfo {
    var subscriptionTransaction: SubscriptionTransaction {
        SubscriptionTransaction(
            productID: productID, transactionID: transactionID, originalTransactionID: originalTransactionID,
            purchaseDateMs: purchaseDateMs, expiresDateMs: expiresDateMs, revocationDateMs: cancellationDateMs, isUpgraded: isUpgraded,
            ownershipType: inAppOwnershipType)
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
