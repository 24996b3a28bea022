/// Apple's `TransactionCommitmentInfo` (App Store Server API 1.21, Notifications 2.21): a transaction
/// of a monthly subscription with a 12-month commitment — which monthly payment of the commitment it
/// is, and the commitment's end and price. Apple's reference gives the names and types only.
public struct TransactionCommitmentInfo: Decodable, Sendable, Equatable {
    /// `billingPeriodNumber`: which billing period of the commitment this transaction pays, 1…12.
    public var billingPeriodNumber: Int?
    /// `commitmentExpiresDate`: when the commitment ends, ms since 1970.
    public var commitmentExpiresDate: Int64?
    /// `commitmentPrice`: the commitment's price, in milliunits of the transaction's `currency`
    /// (in Apple's sample, twelve times the monthly price).
    public var commitmentPrice: Int64?
    /// `totalBillingPeriods`: how many billing periods the commitment has.
    public var totalBillingPeriods: Int?
}
