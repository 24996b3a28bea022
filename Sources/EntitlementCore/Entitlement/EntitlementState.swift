/// The entitlement a row grants, in the words of the `entitlements` view's `state` column.
public enum EntitlementState: String, Sendable, CaseIterable, Codable {
    case active
    case gracePeriod = "grace_period"
    case billingRetry = "billing_retry"
    case expired
    case refunded
    case unverified

    /// Whether the web service grants premium access: active, or inside a billing grace period.
    public var isEntitled: Bool { self == .active || self == .gracePeriod }

    /// The rule of the `entitlements` view, from the columns it reads, at `nowMs`: the one place
    /// it is written in Swift (``SubscriptionState`` and the report's `TrailState` both ask it).
    public init(
        isVerified: Bool, cancelledAt: Int64?, expiresAt: Int64?, gracePeriodExpiresAt: Int64?, isInBillingRetry: Bool, at nowMs: Int64
    ) {
        if !isVerified {
            self = .unverified
        } else if cancelledAt != nil {
            self = .refunded
        } else if let expiresAt, expiresAt > nowMs {
            self = .active
        } else if let gracePeriodExpiresAt, gracePeriodExpiresAt > nowMs {
            self = .gracePeriod
        } else {
            self = isInBillingRetry ? .billingRetry : .expired
        }
    }
}
