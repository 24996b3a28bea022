/// The contract columns of one `subscriptions` row: what the web service reads to grant access.
///
/// Every value comes from Apple's answer; the poller never invents one. Times are milliseconds
/// since 1970, as Apple sends them.
public struct SubscriptionState: Sendable, Equatable, Hashable, Codable {
    /// `original_transaction_id`: nil until the first successful verification.
    public var originalTransactionID: String?
    /// `product_id` of the effective transaction.
    public var productID: String?
    /// `environment`: "Production" or "Sandbox", as Apple answered.
    public var environment: String?
    /// `expires_at`: `expires_date_ms` of the effective transaction.
    public var expiresAt: Int64?
    /// `grace_period_expires_at`: `grace_period_expires_date_ms`, nil when Apple sends none.
    public var gracePeriodExpiresAt: Int64?
    /// `is_in_billing_retry`: `is_in_billing_retry_period`.
    public var isInBillingRetry: Bool
    /// `auto_renew_status`
    public var autoRenewStatus: Bool?
    /// `auto_renew_product_id`
    public var autoRenewProductID: String?
    /// `expiration_intent`: Apple's 1…5, nil when Apple sends none.
    public var expirationIntent: Int?
    /// `cancelled_at`: `cancellation_date_ms` of the effective transaction (refund or revocation).
    public var cancelledAt: Int64?
    /// `transaction_id` of the effective transaction: which period of the chain the row holds, so a
    /// message about another period (a refund of last month) is known for what it is.
    public var transactionID: String?
    /// `purchased_at`: `purchase_date_ms` of the effective transaction, when the current period began.
    public var purchasedAt: Int64?
    /// `in_app_ownership_type`: "PURCHASED", or "FAMILY_SHARED" for access through Family Sharing.
    public var ownershipType: String?
    /// `billing_plan_type`: the effective transaction's `billingPlanType` ("MONTHLY": monthly
    /// billing with a 12-month commitment; "BILLED_UPFRONT"); nil when Apple sends none.
    public var billingPlanType: String?
    /// `commitment_period` of `commitment_periods`: which billing period of the commitment the
    /// effective transaction pays; `commitment_expires_at`: when the commitment ends, ms.
    public var commitmentPeriod: Int?
    public var commitmentPeriods: Int?
    public var commitmentExpiresAt: Int64?
    /// `renewal_billing_plan_type`: the plan the next period renews on (renewal info).
    public var renewalBillingPlanType: String?

    public init(
        originalTransactionID: String? = nil, productID: String? = nil, environment: String? = nil,
        expiresAt: Int64? = nil, gracePeriodExpiresAt: Int64? = nil, isInBillingRetry: Bool = false,
        autoRenewStatus: Bool? = nil, autoRenewProductID: String? = nil, expirationIntent: Int? = nil,
        cancelledAt: Int64? = nil, transactionID: String? = nil, purchasedAt: Int64? = nil, ownershipType: String? = nil,
        billingPlanType: String? = nil, commitmentPeriod: Int? = nil, commitmentPeriods: Int? = nil, commitmentExpiresAt: Int64? = nil,
        renewalBillingPlanType: String? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.environment = environment
        self.expiresAt = expiresAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.isInBillingRetry = isInBillingRetry
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewProductID = autoRenewProductID
        self.expirationIntent = expirationIntent
        self.cancelledAt = cancelledAt
        self.transactionID = transactionID
        self.purchasedAt = purchasedAt
        self.ownershipType = ownershipType
        self.billingPlanType = billingPlanType
        self.commitmentPeriod = commitmentPeriod
        self.commitmentPeriods = commitmentPeriods
        self.commitmentExpiresAt = commitmentExpiresAt
        self.renewalBillingPlanType = renewalBillingPlanType
    }

    /// The contract's column names, for the audit trail's JSON.
    typealias CodingKeys = ContractColumn

    /// Encodes every column, nulls included, so an audit row shows what was cleared.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        for column in ContractColumn.allCases {
            switch column.value(in: self) {
            case .text(let value): try c.encode(value, forKey: column)
            case .number(let value): try c.encode(value, forKey: column)
            case .flag(let value): try c.encode(value, forKey: column)
            case .time(let value): try c.encode(value, forKey: column)
            }
        }
    }

    /// A row the web service has just inserted: nothing verified yet.
    public static let unverified = SubscriptionState()

    /// The entitlement this state gives at `nowMs`; the `entitlements` view computes the same in SQL.
    public func entitlement(at nowMs: Int64) -> EntitlementState {
        EntitlementState(
            isVerified: originalTransactionID != nil, cancelledAt: cancelledAt, expiresAt: expiresAt,
            gracePeriodExpiresAt: gracePeriodExpiresAt, isInBillingRetry: isInBillingRetry, at: nowMs)
    }
}
