/// What will happen at a chain's next renewal (verifyReceipt's `pending_renewal_info` entry, the
/// Server API's signed renewal info). A value the backend leaves out is nil, and the decision
/// clears the column.
public struct SubscriptionRenewalInfo: Sendable, Equatable {
    /// The chain this belongs to.
    public var originalTransactionID: String?
    public var productID: String?
    /// What renews next; differs after a downgrade or crossgrade.
    public var autoRenewProductID: String?
    /// Off when the user turned auto-renew off.
    public var autoRenewStatus: Bool?
    /// Apple's 1…5: cancelled, billing error, price increase refused, unavailable, unknown.
    public var expirationIntent: Int?
    /// Apple is still trying to charge.
    public var isInBillingRetryPeriod: Bool?
    /// ms; present only while a billing grace period runs.
    public var gracePeriodExpiresDateMs: Int64?
    /// `renewalBillingPlanType`: the plan the next period renews on ("BILLED_UPFRONT", "MONTHLY").
    public var renewalBillingPlanType: String?

    public init(
        originalTransactionID: String?, productID: String? = nil, autoRenewProductID: String? = nil, autoRenewStatus: Bool? = nil,
        expirationIntent: Int? = nil, isInBillingRetryPeriod: Bool? = nil, gracePeriodExpiresDateMs: Int64? = nil,
        renewalBillingPlanType: String? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.autoRenewProductID = autoRenewProductID
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDateMs = gracePeriodExpiresDateMs
        self.renewalBillingPlanType = renewalBillingPlanType
    }
}
