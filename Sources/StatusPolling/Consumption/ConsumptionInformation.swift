import Foundation

/// The body of Send Consumption Information (`PUT /inApps/v2/transactions/consumption/{transactionId}`),
/// Apple's `ConsumptionRequest`: the customer's consent, whether the purchase was delivered,
/// whether a sample or trial came before it, and the preferred outcome. No `consumptionPercentage`:
/// this tool answers for auto-renewable subscriptions, for which Apple computes it.
public struct ConsumptionInformation: Sendable, Equatable, Codable {
    /// `customerConsented`: Apple refuses any other value than true (400, 4000035).
    public var customerConsented: Bool
    /// `deliveryStatus`.
    public var deliveryStatus: DeliveryStatus
    /// `sampleContentProvided`.
    public var sampleContentProvided: Bool
    /// `refundPreference`; nil: left out, Apple decides.
    public var refundPreference: RefundPreference?

    public init(customerConsented: Bool, deliveryStatus: DeliveryStatus, sampleContentProvided: Bool, refundPreference: RefundPreference?) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.refundPreference = refundPreference
    }

    /// The JSON sent and stored, keys sorted, so that a resend after a crash sends the same bytes.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
