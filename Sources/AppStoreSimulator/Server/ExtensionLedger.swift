/// What the simulated App Store remembers of renewal-date extension requests: each single
/// request's answer by its `requestIdentifier` (a repeat gets the same answer and extends nothing
/// again), and each mass request until and after it completes.
struct ExtensionLedger: Sendable {
    /// One Extend Subscription Renewal Dates for All Active Subscribers request.
    struct MassRequest: Sendable {
        var requestIdentifier: String
        var productID: String
        var days: Int
        var reasonCode: Int
        /// ISO 3166-1 alpha-3 codes; nil for every storefront.
        var storefrontCountryCodes: [String]?
        var environment: String
        var requestedAtMs: Int64
        /// The simulated instant the App Store finishes it.
        var completesAtMs: Int64
        var complete = false
        var succeeded = 0
        var failed = 0
    }

    /// A single request's HTTP status and body, by request identifier.
    var single: [String: (originalTransactionID: String, status: Int, body: String)] = [:]
    var mass: [String: MassRequest] = [:]

    static var massDurationMs: Int64 { AppStoreSimulator.massExtensionDurationMs }
}
