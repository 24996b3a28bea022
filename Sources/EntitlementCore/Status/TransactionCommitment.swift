/// A transaction's place in a monthly subscription with a 12-month commitment (App Store Server
/// API 1.21, April 2026): kept on the row so the web service can say "month 3 of 12" and when the
/// commitment ends. Access is decided by the transaction's expiry as for any period.
public struct TransactionCommitment: Sendable, Equatable {
    /// `billingPlanType`: "BILLED_UPFRONT" or "MONTHLY".
    public var billingPlanType: String?
    /// `commitmentInfo.billingPeriodNumber`: which billing period of the commitment, 1…12.
    public var billingPeriod: Int?
    /// `commitmentInfo.totalBillingPeriods`.
    public var billingPeriods: Int?
    /// `commitmentInfo.commitmentExpiresDate`, ms.
    public var expiresAtMs: Int64?

    public init(billingPlanType: String?, billingPeriod: Int? = nil, billingPeriods: Int? = nil, expiresAtMs: Int64? = nil) {
        self.billingPlanType = billingPlanType
        self.billingPeriod = billingPeriod
        self.billingPeriods = billingPeriods
        self.expiresAtMs = expiresAtMs
    }
}
