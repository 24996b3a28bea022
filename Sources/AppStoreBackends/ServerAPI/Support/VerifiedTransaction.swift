import EntitlementCore

/// One transaction as Apple signed it for a support question (an order, a transaction id, a
/// refund), after its signature, app and environment were verified: our names for Apple's fields.
public struct VerifiedTransaction: Sendable, Equatable, Codable {
    public var transactionID: String
    public var originalTransactionID: String?
    public var webOrderLineItemID: String?
    public var productID: String?
    public var purchaseDateMs: Int64?
    public var expiresDateMs: Int64?
    /// When Apple refunded or revoked it.
    public var revocationDateMs: Int64?
    /// 0 another reason, 1 an issue in the app.
    public var revocationReason: Int?
    /// "REFUND_FULL", "REFUND_PRORATED" or "FAMILY_REVOKE".
    public var revocationType: String?
    /// "PURCHASED" or "FAMILY_SHARED".
    public var ownershipType: String?
    /// "PURCHASE" or "RENEWAL".
    public var transactionReason: String?
    public var environment: String
    public var signedDateMs: Int64?

    init(_ payload: JWSTransactionPayload, environment: AppStoreEnvironment) {
        transactionID = payload.transactionId ?? ""
        originalTransactionID = payload.originalTransactionId
        webOrderLineItemID = payload.webOrderLineItemId
        productID = payload.productId
        purchaseDateMs = payload.purchaseDate
        expiresDateMs = payload.expiresDate
        revocationDateMs = payload.revocationDate
        revocationReason = payload.revocationReason
        revocationType = payload.revocationType
        ownershipType = payload.inAppOwnershipType
        transactionReason = payload.transactionReason
        self.environment = environment.rawValue
        signedDateMs = payload.signedDate
    }
}
