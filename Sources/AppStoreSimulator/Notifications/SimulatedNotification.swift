import Foundation

/// An App Store Server Notification V2 as the simulator's App Store signs it: the outer payload
/// with `notificationUUID`, `signedDate` and `data` (the app, the environment, the status), and
/// inside it a signed transaction and signed renewal info, each a JWS of the simulator's PKI —
/// the body Apple posts, `{"signedPayload": "…"}`. Shares no type with the receiver.
public struct SimulatedNotification: Sendable {
    public var type: String
    public var subtype: String?
    public var uuid: String
    public var signedDateMs: Int64
    public var bundleID: String
    public var appAppleID: Int64?
    public var environment: String
    /// The subscription's status as of `signedDateMs`: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var status: Int
    public var originalTransactionID: String
    public var transactionID: String
    public var productID: String
    public var purchaseDateMs: Int64
    public var expiresDateMs: Int64
    public var revocationDateMs: Int64?
    /// `revocationReason` beside a revocation date: 1 an issue in the app, 0 another reason.
    public var revocationReason: Int?
    public var isUpgraded: Bool
    /// `inAppOwnershipType`: "PURCHASED", or "FAMILY_SHARED" for a Family Sharing member.
    public var ownershipType: String
    public var autoRenewStatus: Bool
    public var autoRenewProductID: String
    public var expirationIntent: Int?
    public var isInBillingRetryPeriod: Bool
    public var gracePeriodExpiresDateMs: Int64?

    public init(
        type: String, subtype: String? = nil, uuid: String, signedDateMs: Int64, bundleID: String, appAppleID: Int64?, environment: String = "Production",
        status: Int = 1, originalTransactionID: String, transactionID: String, productID: String, purchaseDateMs: Int64, expiresDateMs: Int64,
        revocationDateMs: Int64? = nil, autoRenewStatus: Bool = true, autoRenewProductID: String? = nil, expirationIntent: Int? = nil,
        isInBillingRetryPeriod: Bool = false, gracePeriodExpiresDateMs: Int64? = nil, revocationReason: Int? = nil, isUpgraded: Bool = false,
        ownershipType: String = "PURCHASED"
    ) {
        self.type = type
        self.subtype = subtype
        self.uuid = uuid
        self.signedDateMs = signedDateMs
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environment = environment
        self.status = status
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
        self.productID = productID
        self.purchaseDateMs = purchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.revocationDateMs = revocationDateMs
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewProductID = autoRenewProductID ?? productID
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDateMs = gracePeriodExpiresDateMs
        self.revocationReason = revocationReason
        self.isUpgraded = isUpgraded
        self.ownershipType = ownershipType
    }

    /// The body Apple posts: `{"signedPayload":"…"}`, signed by `pki`.
    public func body(signedBy pki: SimulatorPKI) -> Data {
        var transaction: [String: Any] = [
            "transactionId": transactionID, "originalTransactionId": originalTransactionID, "bundleId": bundleID, "productId": productID,
            "purchaseDate": purchaseDateMs, "expiresDate": expiresDateMs, "type": "Auto-Renewable Subscription", "environment": environment,
            "signedDate": signedDateMs, "inAppOwnershipType": ownershipType,
        ]
        if let revocationDateMs { transaction["revocationDate"] = revocationDateMs }
        if let revocationReason, revocationDateMs != nil { transaction["revocationReason"] = revocationReason }
        if isUpgraded { transaction["isUpgraded"] = true }
        var renewal: [String: Any] = [
            "originalTransactionId": originalTransactionID, "productId": productID, "autoRenewProductId": autoRenewProductID,
            "autoRenewStatus": autoRenewStatus ? 1 : 0, "isInBillingRetryPeriod": isInBillingRetryPeriod, "environment": environment,
            "signedDate": signedDateMs,
        ]
        if let expirationIntent { renewal["expirationIntent"] = expirationIntent }
        if let gracePeriodExpiresDateMs { renewal["gracePeriodExpiresDate"] = gracePeriodExpiresDateMs }
        var data: [String: Any] = [
            "bundleId": bundleID, "bundleVersion": "1", "environment": environment, "status": status,
            "signedTransactionInfo": pki.sign(transaction), "signedRenewalInfo": pki.sign(renewal),
        ]
        if let appAppleID, environment == "Production" { data["appAppleId"] = appAppleID }
        var payload: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "signedDate": signedDateMs, "version": "2.0", "data": data]
        if let subtype { payload["subtype"] = subtype }
        return (try? JSONSerialization.data(withJSONObject: ["signedPayload": pki.sign(payload)], options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }
}
