/// What one transaction says beyond the entitlement: Apple's signing, its money, storefront and
/// offer — the ledger's facts (`subscription_transactions`), which the report's revenue and
/// conversion figures read. Nothing here decides access. Nil is unknown: verifyReceipt and V1
/// bodies carry no price, currency or storefront, and a value is never guessed.
public struct TransactionFacts: Sendable, Equatable {
    /// `signedDate` of the signed transaction (JWS only), ms.
    public var signedAtMs: Int64?
    /// `environment` of the signed transaction: "Production" or "Sandbox".
    public var environment: String?
    /// `price`, in milliunits of `currency` (10990 is 10.99).
    public var price: Int64?
    /// `currency`: ISO 4217, e.g. "USD".
    public var currency: String?
    /// `storefront`: the App Store country, ISO 3166-1 alpha-3, e.g. "USA".
    public var storefront: String?
    /// `storefrontId`.
    public var storefrontID: String?
    /// `transactionReason`: "PURCHASE" or "RENEWAL".
    public var transactionReason: String?
    /// `offerType`: 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    public var offerType: Int?
    /// `offerIdentifier` (verifyReceipt: `promotional_offer_id` or `offer_code_ref_name`).
    public var offerIdentifier: String?
    /// `offerDiscountType`: "FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT" or "ONE_TIME".
    public var offerDiscountType: String?
    /// `offerPeriod`: the offer's duration, ISO 8601, e.g. "P1M".
    public var offerPeriod: String?
    /// `revocationReason` (verifyReceipt: `cancellation_reason`): 1 an issue in the app, 0 other.
    public var revocationReason: Int?
    /// `revocationType`: "REFUND_FULL", "REFUND_PRORATED" or "FAMILY_REVOKE" (December 2025).
    public var revocationType: String?
    /// `revocationPercentage`: how much of a prorated refund, in milliunits of a percent.
    public var revocationPercentage: Int?
    /// `webOrderLineItemId`: one purchase event across devices.
    public var webOrderLineItemID: String?

    public init(
        signedAtMs: Int64? = nil, environment: String? = nil, price: Int64? = nil, currency: String? = nil, storefront: String? = nil,
        storefrontID: String? = nil, transactionReason: String? = nil, offerType: Int? = nil, offerIdentifier: String? = nil,
        offerDiscountType: String? = nil, offerPeriod: String? = nil, revocationReason: Int? = nil, revocationType: String? = nil,
        revocationPercentage: Int? = nil, webOrderLineItemID: String? = nil
    ) {
        self.signedAtMs = signedAtMs
        self.environment = environment
        self.price = price
        self.currency = currency
        self.storefront = storefront
        self.storefrontID = storefrontID
        self.transactionReason = transactionReason
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.offerDiscountType = offerDiscountType
        self.offerPeriod = offerPeriod
        self.revocationReason = revocationReason
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.webOrderLineItemID = webOrderLineItemID
    }
}
