/// Apple's `JWSRenewalInfoDecodedPayload`: what happens at a chain's next renewal. It names no app,
/// so it is trusted only beside a verified transaction of the same chain.
public struct JWSRenewalInfoPayload: Decodable, Sendable, Equatable, SignedPayload {
    /// `originalTransactionId`: the chain.
    public var originalTransactionId: String?
    /// `productId`: what the chain is on now.
    public var productId: String?
    /// `autoRenewProductId`: what renews next.
    public var autoRenewProductId: String?
    /// `autoRenewStatus`: 1 on, 0 off.
    public var autoRenewStatus: Int?
    /// `expirationIntent`: 1…5, once the subscription has ended.
    public var expirationIntent: Int?
    /// `isInBillingRetryPeriod`.
    public var isInBillingRetryPeriod: Bool?
    /// `gracePeriodExpiresDate`: only while a billing grace period runs.
    public var gracePeriodExpiresDate: Int64?
    /// `environment`.
    public var environment: String?
    /// `signedDate`.
    public var signedDate: Int64?
    /// `renewalBillingPlanType` (App Store Server API 1.21): the plan the next period renews on,
    /// "BILLED_UPFRONT" or "MONTHLY" (monthly with a 12-month commitment).
    public var renewalBillingPlanType: String?
    /// `commitmentInfo` (`RenewalCommitmentInfo`): what happens when the current 12-month commitment
    /// ends; present only with a commitment.
    public var commitmentInfo: RenewalCommitmentInfo?
}
