/// Apple's `refundPreference` of a ConsumptionRequest (App Store Server API 1.19): the outcome
/// the developer prefers. Omitted, Apple decides alone.
public enum RefundPreference: String, Sendable, CaseIterable, Codable {
    case decline = "DECLINE"
    case grantFull = "GRANT_FULL"
    /// For an auto-renewable subscription Apple computes the consumption itself: no
    /// `consumptionPercentage` is sent with it.
    case grantProrated = "GRANT_PRORATED"
}
