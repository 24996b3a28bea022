extension SubscriptionState {
    /// The contract columns as the audit trail stores them: a JSON object with every column, nulls
    /// included, keys sorted. Written by hand because the writer makes one per changed row; the
    /// `Codable` conformance reads it back.
    public var auditJSON: String {
        """
        {"auto_renew_product_id":\(JSONText.quoted(autoRenewProductID)),"auto_renew_status":\(JSONText.bool(autoRenewStatus)),\
        "billing_plan_type":\(JSONText.quoted(billingPlanType)),"cancelled_at":\(JSONText.number(cancelledAt)),\
        "commitment_expires_at":\(JSONText.number(commitmentExpiresAt)),"commitment_period":\(JSONText.number(commitmentPeriod)),\
        "commitment_periods":\(JSONText.number(commitmentPeriods)),"environment":\(JSONText.quoted(environment)),\
        "expiration_intent":\(JSONText.number(expirationIntent)),"expires_at":\(JSONText.number(expiresAt)),\
        "grace_period_expires_at":\(JSONText.number(gracePeriodExpiresAt)),"in_app_ownership_type":\(JSONText.quoted(ownershipType)),\
        "is_in_billing_retry":\(JSONText.bool(isInBillingRetry)),"original_transaction_id":\(JSONText.quoted(originalTransactionID)),\
        "product_id":\(JSONText.quoted(productID)),"purchased_at":\(JSONText.number(purchasedAt)),\
        "renewal_billing_plan_type":\(JSONText.quoted(renewalBillingPlanType)),"transaction_id":\(JSONText.quoted(transactionID))}
        """
    }
}
