/// Apple's `JWSTransactionDecodedPayload`: one transaction, as the App Store Server API signs it.
/// Dates are ms since 1970, as JSON numbers. The decision's fields are decoded strictly; the
/// ledger's facts (price, storefront, offer…) are ``Lenient``: a reshaped one reads as unknown.
public struct JWSTransactionPayload: Decodable, Sendable, Equatable, SignedPayload {
    /// `transactionId`.
    public var transactionId: String?
    /// `originalTransactionId`: the chain.
    public var originalTransactionId: String?
    /// `bundleId`: checked against the configured app.
    public var bundleId: String?
    /// `productId`.
    public var productId: String?
    /// `purchaseDate`.
    public var purchaseDate: Int64?
    /// `expiresDate`: present for auto-renewable subscriptions.
    public var expiresDate: Int64?
    /// `revocationDate`: Apple refunded or revoked the transaction.
    public var revocationDate: Int64?
    /// `isUpgraded`: the user upgraded to another subscription of the group.
    public var isUpgraded: Bool?
    /// `type`, e.g. "Auto-Renewable Subscription".
    public var type: String?
    /// `environment`: "Production" or "Sandbox".
    public var environment: String?
    /// `signedDate`: when Apple signed it.
    public var signedDate: Int64?
    /// `appAccountToken`: the UUID the app passed at purchase, which links a purchase to a user
    /// before the app uploads a receipt.
    public var appAccountToken: String?
    /// `inAppOwnershipType`: "PURCHASED", or "FAMILY_SHARED" for a Family Sharing member's access.
    public var inAppOwnershipType: String?
    /// `revocationReason`: 0 another reason (e.g. a Family Sharing purchaser's refund), 1 an app issue.
    public var revocationReason: Int?
    /// `revocationType`: "REFUND_FULL", "REFUND_PRORATED" or "FAMILY_REVOKE".
    public var revocationType: String?
    /// `webOrderLineItemId`: the purchase event across devices, renewals included.
    public var webOrderLineItemId: String?
    /// `transactionReason`: "PURCHASE" or "RENEWAL".
    public var transactionReason: String?
    /// `billingPlanType` (App Store Server API 1.21): "BILLED_UPFRONT", or "MONTHLY" for a monthly
    /// subscription with a 12-month commitment. Payloads signed before April 2026 lack it.
    public var billingPlanType: String?
    /// `commitmentInfo` (`TransactionCommitmentInfo`): where this transaction stands in its 12-month
    /// commitment; present only with a commitment.
    public var commitmentInfo: TransactionCommitmentInfo?
    /// `price`: in milliunits of `currency`.
    @Lenient public var price: Int64? = nil
    /// `currency`: ISO 4217.
    @Lenient public var currency: String? = nil
    /// `storefront`: ISO 3166-1 alpha-3.
    @Lenient public var storefront: String? = nil
    /// `storefrontId`.
    @Lenient public var storefrontId: String? = nil
    /// `offerType`: 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    @Lenient public var offerType: Int? = nil
    /// `offerIdentifier`: the promotional offer's or offer code's name.
    @Lenient public var offerIdentifier: String? = nil
    /// `offerDiscountType`: "FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT" or "ONE_TIME".
    @Lenient public var offerDiscountType: String? = nil
    /// `offerPeriod`: ISO 8601 duration.
    @Lenient public var offerPeriod: String? = nil
    /// `revocationPercentage`: milliunits of a percent (December 2025).
    @Lenient public var revocationPercentage: Int? = nil
}
