/// What the ledger (`subscription_transactions`) holds of one transaction, as support reads it
/// beside Apple's answer: whether a refund was seen, by whom first, and what it was worth.
public struct LedgerRecord: Sendable, Equatable, Encodable {
    public var transactionID: String
    public var originalTransactionID: String
    /// The row owning the chain when the ledger was last written.
    public var subscriptionID: Int64?
    public var productID: String?
    public var purchasedAtMs: Int64?
    public var expiresAtMs: Int64?
    public var revokedAtMs: Int64?
    /// Apple's `revocationReason` (0 other, 1 an issue in the app) and `revocationType`
    /// (`REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`).
    public var revocationReason: Int?
    public var revocationType: String?
    /// Price in milliunits of `currency`; nil when no answer carried one (verifyReceipt has none).
    public var price: Int64?
    public var currency: String?
    /// Apple's `storefront` (ISO 3166-1 alpha-3).
    public var storefront: String?
    /// `offerType` (1 introductory, 2 promotional, 3 offer code, 4 win-back), `offerIdentifier`,
    /// `offerDiscountType`; nil for a full-price period, or when no answer said.
    public var offerType: Int?
    public var offerIdentifier: String?
    public var offerDiscountType: String?
    public var isUpgraded: Bool
    /// A row recovered from billing retry with this transaction (`billing_recovery`).
    public var isBillingRecovery: Bool
    /// When the values held were Apple's (the answer's instant).
    public var asOfMs: Int64
    /// `poll`, `backfill`, `notification`, `history` (the catch-up) or `extended`, and when.
    public var firstSource: String
    public var firstSeenAtMs: Int64
    public var updatedAtMs: Int64

    public init(
        transactionID: String, originalTransactionID: String, subscriptionID: Int64?, productID: String?, purchasedAtMs: Int64?,
        expiresAtMs: Int64?, revokedAtMs: Int64?, revocationReason: Int?, revocationType: String?, price: Int64?, currency: String?,
        storefront: String? = nil, offerType: Int? = nil, offerIdentifier: String? = nil, offerDiscountType: String? = nil, isUpgraded: Bool = false,
        isBillingRecovery: Bool = false, asOfMs: Int64, firstSource: String, firstSeenAtMs: Int64, updatedAtMs: Int64
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.subscriptionID = subscriptionID
        self.productID = productID
        self.purchasedAtMs = purchasedAtMs
        self.expiresAtMs = expiresAtMs
        self.revokedAtMs = revokedAtMs
        self.revocationReason = revocationReason
        self.revocationType = revocationType
        self.price = price
        self.currency = currency
        self.storefront = storefront
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.offerDiscountType = offerDiscountType
        self.isUpgraded = isUpgraded
        self.isBillingRecovery = isBillingRecovery
        self.asOfMs = asOfMs
        self.firstSource = firstSource
        self.firstSeenAtMs = firstSeenAtMs
        self.updatedAtMs = updatedAtMs
    }
}
