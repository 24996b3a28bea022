/// Apple's refusals of a renewal-date extension, by `errorCode`, each with what it means for the
/// operator.
public enum RenewalExtensionRefusal: Int, Sendable, Equatable, CaseIterable {
    /// InvalidExtendByDaysError.
    case invalidDays = 4_000_009
    /// InvalidExtendReasonCodeError.
    case invalidReason = 4_000_010
    /// InvalidRequestIdentifierError.
    case invalidRequestIdentifier = 4_000_011
    /// InvalidProductIdError (mass requests).
    case invalidProduct = 4_000_023
    /// InvalidEmptyStorefrontCountryCodeListError (mass requests).
    case emptyStorefronts = 4_000_027
    /// InvalidStorefrontCountryCodeError (mass requests).
    case invalidStorefront = 4_000_028
    /// SubscriptionExtensionIneligibleError.
    case ineligible = 4_030_004
    /// SubscriptionMaxExtensionError.
    case maximumReached = 4_030_005
    /// FamilySharedSubscriptionExtensionIneligibleError.
    case familyShared = 4_030_007
    /// OriginalTransactionIdNotFoundError.
    case unknownSubscription = 4_040_005

    /// What Apple's refusal means, in a line.
    public var explanation: String {
        switch self {
        case .invalidDays: "the number of days must be 1 to 90"
        case .invalidReason: "the reason code must be 0 to 3"
        case .invalidRequestIdentifier: "the request identifier must be given and at most 128 characters"
        case .invalidProduct: "Apple does not know the product id for this app"
        case .emptyStorefronts: "the storefront list is empty: leave it out for every storefront"
        case .invalidStorefront: "a storefront code is not an ISO 3166-1 alpha-3 code (USA, CAN, …)"
        case .ineligible:
            "the subscription is not in an active paid period (expired, in billing retry, in a free offer, or refunded); only active paid subscriptions can be extended"
        case .maximumReached: "the subscription was already extended twice in the past 365 days, Apple's limit"
        case .familyShared: "the customer has it through Family Sharing: extend the purchaser's subscription, which extends the family's"
        case .unknownSubscription: "Apple does not know this original transaction id for this app"
        }
    }
}
