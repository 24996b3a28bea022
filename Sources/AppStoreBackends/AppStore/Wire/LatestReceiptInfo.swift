/// One transaction of `latest_receipt_info`: a purchase or renewal of an auto-renewable subscription.
/// Every value arrives as a string; only the keys the entitlement decision needs are read.
public struct LatestReceiptInfo: Sendable, Equatable {
    /// `product_id`
    public var productID: String?
    /// `transaction_id`
    public var transactionID: String?
    /// `original_transaction_id`: shared by every renewal of one subscription (the chain).
    public var originalTransactionID: String?
    /// `purchase_date_ms`
    public var purchaseDateMs: Int64?
    /// `expires_date_ms`: absent for non-subscription purchases.
    public var expiresDateMs: Int64?
    /// `cancellation_date_ms`: set when Apple support refunded or revoked the transaction.
    public var cancellationDateMs: Int64?
    /// `cancellation_reason`: "1" an issue in the app, "0" other.
    public var cancellationReason: String?
    /// `is_upgraded`: "true" when the user upgraded away from this transaction.
    public var isUpgraded: Bool
    /// `is_trial_period`
    public var isTrialPeriod: Bool
    /// `is_in_intro_offer_period`
    public var isInIntroOfferPeriod: Bool
    /// `subscription_group_identifier`
    public var subscriptionGroupIdentifier: String?
    /// `in_app_ownership_type`: "PURCHASED" or "FAMILY_SHARED".
    public var inAppOwnershipType: String?
    /// `web_order_line_item_id`. This and the offer's keys feed the ledger only, so one of an
    /// unexpected type reads as absent rather than refusing the answer.
    public var webOrderLineItemID: String?
    /// `promotional_offer_id`: the promotional offer this period was bought with.
    public var promotionalOfferID: String?
    /// `offer_code_ref_name`: the offer code's reference name.
    public var offerCodeRefName: String?

    public init(
        productID: String?, transactionID: String? = nil, originalTransactionID: String?,
        purchaseDateMs: Int64? = nil, expiresDateMs: Int64?, cancellationDateMs: Int64? = nil,
        cancellationReason: String? = nil, isUpgraded: Bool = false, isTrialPeriod: Bool = false,
        isInIntroOfferPeriod: Bool = false, subscriptionGroupIdentifier: String? = nil, inAppOwnershipType: String? = nil,
        webOrderLineItemID: String? = nil, promotionalOfferID: String? = nil, offerCodeRefName: String? = nil
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.purchaseDateMs = purchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.cancellationDateMs = cancellationDateMs
        self.cancellationReason = cancellationReason
        self.isUpgraded = isUpgraded
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.inAppOwnershipType = inAppOwnershipType
        self.webOrderLineItemID = webOrderLineItemID
        self.promotionalOfferID = promotionalOfferID
        self.offerCodeRefName = offerCodeRefName
    }

    init(_ o: WireObject) throws {
        productID = try o.string("product_id")
        transactionID = try o.string("transaction_id")
        originalTransactionID = try o.string("original_transaction_id")
        purchaseDateMs = try o.int64("purchase_date_ms")
        expiresDateMs = try o.int64("expires_date_ms")
        cancellationDateMs = try o.int64("cancellation_date_ms")
        cancellationReason = try o.string("cancellation_reason")
        isUpgraded = try o.bool("is_upgraded") ?? false
        isTrialPeriod = try o.bool("is_trial_period") ?? false
        isInIntroOfferPeriod = try o.bool("is_in_intro_offer_period") ?? false
        subscriptionGroupIdentifier = try o.string("subscription_group_identifier")
        inAppOwnershipType = try o.string("in_app_ownership_type")
        webOrderLineItemID = (try? o.string("web_order_line_item_id")) ?? nil
        promotionalOfferID = (try? o.string("promotional_offer_id")) ?? nil
        offerCodeRefName = (try? o.string("offer_code_ref_name")) ?? nil
    }
}
