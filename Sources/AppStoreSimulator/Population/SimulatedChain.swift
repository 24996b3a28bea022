/// One subscription (one `original_transaction_id`) as the App Store recorded it over simulated
/// time: every transaction and every change, each stamped with the instant it happened. What Apple
/// answers at an instant, and the truth at that instant, are both read from this history.
public struct SimulatedChain: Sendable {
    /// A charge, renewal or free trial.
    public struct Transaction: Sendable {
        public var transactionID: String
        public var productID: String
        /// When the charge went through; the transaction is visible from then on.
        public var purchaseMs: Int64
        public var expiresMs: Int64
        public var isTrial: Bool
        public var isIntroOffer: Bool
        /// Apple refunded it (or, in a Family Sharing member's chain, revoked it) at this instant.
        public var refundedAtMs: Int64?
        /// `revocationReason` and `cancellation_reason` of that refund: 1 an issue in the app, 0 another reason.
        public var refundReason = 0
        /// The customer asked for this transaction's money back at this instant: Apple sends
        /// `CONSUMPTION_REQUEST`, then refunds (``refundedAtMs``) or declines (``refundDeclinedAtMs``).
        public var refundRequestedAtMs: Int64?
        /// Apple declined that request at this instant (`REFUND_DECLINED`): nothing changes.
        public var refundDeclinedAtMs: Int64?
        /// Apple reversed its refund at this instant (`REFUND_REVERSED`): the transaction is whole again.
        public var refundReversedAtMs: Int64?
        /// The user upgraded away from it at this instant (`is_upgraded`, and cancelled then).
        public var upgradedAtMs: Int64?

        /// When the refund in force at `ms` took the transaction back: nil before a refund and
        /// after its reversal.
        public func refund(at ms: Int64) -> Int64? {
            guard let refunded = refundedAtMs, refunded <= ms else { return nil }
            if let reversed = refundReversedAtMs, reversed <= ms { return nil }
            return refunded
        }
    }

    /// A value that changed at an instant (auto-renew status, the product that renews next).
    public struct Change<Value: Sendable>: Sendable {
        public var atMs: Int64
        public var value: Value
    }

    /// Apple retrying a failed renewal charge, from the expiry until recovery or until it gives up.
    public struct BillingRetry: Sendable {
        public var startMs: Int64
        public var endMs: Int64
        /// The end of the billing grace period, when the app has one.
        public var graceEndMs: Int64?
        public var recovered: Bool
    }

    /// The subscription ended at this instant for this `expiration_intent` (1 voluntary, 2 billing).
    public struct Lapse: Sendable {
        public var atMs: Int64
        public var intent: Int
    }

    /// A purchase after the first: a resubscription after a lapse, or an upgrade. Made in the
    /// app, it uploads a new receipt; made in the App Store (its subscription settings, a
    /// win-back offer), nothing reaches the web service.
    public struct Purchase: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case resubscription, upgrade }
        public var atMs: Int64
        public var kind: Kind
        public var inApp: Bool
    }

    public var originalTransactionID: String
    public var groupID: String
    /// `inAppOwnershipType` of every transaction: "PURCHASED", or "FAMILY_SHARED" for a Family
    /// Sharing member's chain (the purchaser pays; a refund or an end of sharing is a `REVOKE`).
    public var ownershipType = "PURCHASED"
    public var isFamilyShared: Bool { ownershipType == "FAMILY_SHARED" }
    public var transactions: [Transaction] = []
    public var autoRenew: [Change<Bool>] = []
    public var autoRenewProduct: [Change<String>] = []
    public var billingRetries: [BillingRetry] = []
    public var lapses: [Lapse] = []
    /// What the customer bought after the first purchase, in order.
    public var purchases: [Purchase] = []
    /// The renewal-date extensions Apple granted, in order.
    public var extensions: [RenewalExtension] = []

    init(originalTransactionID: String, groupID: String) {
        self.originalTransactionID = originalTransactionID
        self.groupID = groupID
    }

    /// Instants the user bought in the app, which uploads a new receipt.
    public var inAppPurchases: [Int64] { purchases.filter(\.inApp).map(\.atMs) }

    func latest<V>(_ changes: [Change<V>], at ms: Int64) -> V? {
        changes.last { $0.atMs <= ms }?.value
    }
}
