/// Apple's `ExtendRenewalDateRequest` and, with `productId` and `storefrontCountryCodes`,
/// `MassExtendRenewalDateRequest`: days (1…90), the reason code, a request identifier.
struct ExtendRenewalDateRequest: Encodable {
    var extendByDays: Int
    var extendReasonCode: Int
    var requestIdentifier: String
    /// Mass requests only.
    var productId: String?
    /// Mass requests only; nil for every storefront.
    var storefrontCountryCodes: [String]?
}
