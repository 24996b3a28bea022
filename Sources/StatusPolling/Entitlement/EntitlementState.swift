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
}
