/// The offer a transaction was bought with, in the words of Apple's signed transaction:
/// `offerType` 1 an introductory offer (the chain's free trial, or its first period at half price
/// paid as you go), 2 a promotional offer (a retention discount on a renewal), 3 an offer code
/// (redeemed for a first purchase), 4 a win-back offer (a resubscription after a lapse);
/// `offerIdentifier` (none for an introductory offer), `offerDiscountType`, `offerPeriod`. Which
/// transactions have one besides the trial and the introductory offer is a fixed function of the
/// transaction's id, so no random draw of the population moves; every offer but the trial is half
/// price for its period. A Family Sharing member redeems none (the purchaser's transaction is the
/// one bought), and a renewal Apple charged late to recover a billing retry carries none.
public struct SimulatedOffer: Sendable, Equatable {
    public let type: Int
    public let identifier: String?
    public let discountType: String
    public let period: String

    public static let promotionalIdentifier = "retention.half.1m"
    public static let offerCodeName = "SPRING.HALF"
    public static let winBackIdentifier = "winback.half.1m"

    /// The offer of `t` in `chain`, nil for a full-price period.
    public static func of(_ t: SimulatedChain.Transaction, in chain: SimulatedChain) -> SimulatedOffer? {
        if t.isTrial { return SimulatedOffer(type: 1, identifier: nil, discountType: "FREE_TRIAL", period: "P1W") }
        let period = Catalog.product(t.productID).durationMs > 40 * Catalog.dayMs ? "P1Y" : "P1M"
        if t.isIntroOffer { return SimulatedOffer(type: 1, identifier: nil, discountType: "PAY_AS_YOU_GO", period: period) }
        guard !chain.isFamilyShared else { return nil }
        let print = fingerprint(t.transactionID)
        if t.transactionID == chain.transactions.first?.transactionID {
            return print % 7 == 3 ? SimulatedOffer(type: 3, identifier: offerCodeName, discountType: "PAY_AS_YOU_GO", period: period) : nil
        }
        if let purchase = chain.purchases.first(where: { $0.atMs == t.purchaseMs }) {
            guard purchase.kind == .resubscription, print % 2 == 0 else { return nil }
            return SimulatedOffer(type: 4, identifier: winBackIdentifier, discountType: "PAY_AS_YOU_GO", period: period)
        }
        let recovery = chain.billingRetries.contains { $0.recovered && $0.endMs == t.purchaseMs }
        return print % 13 == 5 && !recovery ? SimulatedOffer(type: 2, identifier: promotionalIdentifier, discountType: "PAY_AS_YOU_GO", period: period) : nil
    }

    /// What `t` cost the customer, milliunits of its chain's storefront's currency: nothing for a
    /// free trial, half the full price under any other offer.
    public static func price(_ t: SimulatedChain.Transaction, in chain: SimulatedChain) -> Int {
        let full = Storefront.of(chain).price(of: t.productID)
        guard let offer = of(t, in: chain) else { return full }
        return offer.discountType == "FREE_TRIAL" ? 0 : full / 2
    }

    /// A number fixed by an id, spread evenly (its FNV-1a hash).
    static func fingerprint(_ id: String) -> Int {
        Int(stableHash(id) % 1_000_003)
    }
}
