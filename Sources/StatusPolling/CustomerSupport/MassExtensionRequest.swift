/// One Extend Subscription Renewal Dates for All Active Subscribers request, as the database keeps
/// it (`renewal_extensions`): what was asked, whether Apple took it, and Apple's last status.
public struct MassExtensionRequest: Sendable, Equatable {
    public var requestIdentifier: String
    public var productID: String
    public var days: Int
    public var reasonCode: Int
    /// ISO 3166-1 alpha-3 codes; nil for every storefront.
    public var storefrontCountryCodes: [String]?
    /// "Production" or "Sandbox".
    public var environment: String
    /// When it was recorded, before it was sent.
    public var requestedAtMs: Int64
    /// When Apple took it; nil until then (a request recorded but never answered is sent again).
    public var acceptedAtMs: Int64?
    /// Apple's refusal, when it refused.
    public var appleError: Int?
    /// When Apple's status was last asked, and what it said.
    public var checkedAtMs: Int64?
    public var completedAtMs: Int64?
    public var succeeded: Int64?
    public var failed: Int64?

    public init(
        requestIdentifier: String, productID: String, days: Int, reasonCode: Int, storefrontCountryCodes: [String]?, environment: String,
        requestedAtMs: Int64, acceptedAtMs: Int64? = nil, appleError: Int? = nil, checkedAtMs: Int64? = nil, completedAtMs: Int64? = nil,
        succeeded: Int64? = nil, failed: Int64? = nil
    ) {
        self.requestIdentifier = requestIdentifier
        self.productID = productID
        self.days = days
        self.reasonCode = reasonCode
        self.storefrontCountryCodes = storefrontCountryCodes
        self.environment = environment
        self.requestedAtMs = requestedAtMs
        self.acceptedAtMs = acceptedAtMs
        self.appleError = appleError
        self.checkedAtMs = checkedAtMs
        self.completedAtMs = completedAtMs
        self.succeeded = succeeded
        self.failed = failed
    }

    /// Apple took it and has not said it is complete: `extend status` and the nightly run ask.
    public var isPending: Bool { acceptedAtMs != nil && completedAtMs == nil }
}
