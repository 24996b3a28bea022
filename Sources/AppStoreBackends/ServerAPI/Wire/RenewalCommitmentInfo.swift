/// Apple's `RenewalCommitmentInfo` (App Store Server API 1.21, Notifications 2.21): what the chain
/// does when its current 12-month commitment ends — renew into which product, on which plan, when and
/// at what price. Apple's reference gives the names and types only.
public struct RenewalCommitmentInfo: Decodable, Sendable, Equatable {
    /// `commitmentAutoRenewProductId`: the product the commitment renews into.
    public var commitmentAutoRenewProductId: String?
    /// `commitmentAutoRenewStatus`: 1 the commitment renews, 0 it does not.
    public var commitmentAutoRenewStatus: Int?
    /// `commitmentRenewalBillingPlanType`: the plan of the renewed commitment, "BILLED_UPFRONT" or "MONTHLY".
    public var commitmentRenewalBillingPlanType: String?
    /// `commitmentRenewalDate`: when the commitment renews, ms since 1970.
    public var commitmentRenewalDate: Int64?
    /// `commitmentRenewalPrice`: the renewal's price, in milliunits of the renewal info's `currency`.
    public var commitmentRenewalPrice: Int64?
}
