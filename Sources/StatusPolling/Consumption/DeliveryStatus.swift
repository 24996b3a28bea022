/// Apple's `deliveryStatus` of a ConsumptionRequest (App Store Server API 1.19): whether the app
/// delivered an In-App Purchase that works.
public enum DeliveryStatus: String, Sendable, CaseIterable, Codable {
    case delivered = "DELIVERED"
    case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
    case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
    case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
    case undeliveredOther = "UNDELIVERED_OTHER"
}
