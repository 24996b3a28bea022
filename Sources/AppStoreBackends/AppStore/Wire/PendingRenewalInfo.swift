/// One entry of `pending_renewal_info`: what will happen at the subscription's next renewal.
/// Every value arrives as a string. A key Apple leaves out is nil, and the decision clears it.
public struct PendingRenewalInfo: Sendable, Equatable {
    /// `original_transaction_id`: the chain this entry belongs to.
    public var originalTransactionID: String?
    /// `product_id`
    public var productID: String?
    /// `auto_renew_product_id`: what renews next; differs after a downgrade or crossgrade.
    public var autoRenewProductID: String?
    /// `auto_renew_status`: "1" on, "0" the user turned it off.
    public var autoRenewStatus: Bool?
    /// `expiration_intent`: 1 cancelled, 2 billing error, 3 price increase refused, 4 unavailable, 5 unknown.
    public var expirationIntent: Int?
    /// `is_in_billing_retry_period`: "1" while Apple is still trying to charge.
    public var isInBillingRetryPeriod: Bool?
    /// `grace_period_expires_date_ms`: present only while a billing grace period runs.
    public var gracePeriodExpiresDateMs: Int64?

    public init(
        originalTransactionID: String?, productID: String? = nil, autoRenewProductID: String? = nil,
        autoRenewStatus: Bool? = nil, expirationIntent: Int? = nil, isInBillingRetryPeriod: Bool? = nil,
        gracePeriodExpiresDateMs: Int64? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.autoRenewProductID = autoRenewProductID
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDateMs = gracePeriodExpiresDateMs
    }

    init(_ o: WireObject) throws {
        originalTransactionID = try o.string("original_transaction_id")
        productID = try o.string("product_id")
        autoRenewProductID = try o.string("auto_renew_product_id")
        autoRenewStatus = try o.bool("auto_renew_status")
        expirationIntent = try o.int64("expiration_intent").map { Int(clamping: $0) }
        isInBillingRetryPeriod = try o.bool("is_in_billing_retry_period")
        gracePeriodExpiresDateMs = try o.int64("grace_period_expires_date_ms")
    }
}
