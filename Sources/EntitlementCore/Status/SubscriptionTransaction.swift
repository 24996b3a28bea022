/// One purchase or renewal of an auto-renewable subscription, in the fields the entitlement
/// decision reads (verifyReceipt's `latest_receipt_info` entry, the Server API's signed transaction).
public struct SubscriptionTransaction: Sendable, Equatable {
    public var productID: String?
    public var transactionID: String?
    /// Shared by every renewal of one subscription: the chain.
    public var originalTransactionID: String?
    /// ms since 1970.
    public var purchaseDateMs: Int64?
    /// ms since 1970; nil for a purchase that is not a subscription.
    public var expiresDateMs: Int64?
    /// When Apple refunded or revoked it, ms (verifyReceipt's `cancellation_date_ms`).
    public var revocationDateMs: Int64?
    /// The user upgraded away from this transaction.
    public var isUpgraded: Bool
    /// `in_app_ownership_type`: "PURCHASED" or "FAMILY_SHARED".
    public var ownershipType: String?
    /// Monthly billing with a 12-month commitment (App Store Server API 1.21): `billingPlanType`,
    /// and which period of how many it pays until when (`commitmentInfo`). Nil without one.
    public var commitment: TransactionCommitment?
    /// What the ledger keeps beyond the decision's fields: price, storefront, offer, signing.
    public var facts: TransactionFacts

    public init(
        productID: String?, transactionID: String? = nil, originalTransactionID: String?, purchaseDateMs: Int64? = nil,
        expiresDateMs: Int64?, revocationDateMs: Int64? = nil, isUpgraded: Bool = false,
        ownershipType: String? = nil, commitment: TransactionCommitment? = nil, facts: TransactionFacts = TransactionFacts()
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.purchaseDateMs = purchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.revocationDateMs = revocationDateMs
        self.isUpgraded = isUpgraded
        self.ownershipType = ownershipType
        self.commitment = commitment
        self.facts = facts
    }
}
