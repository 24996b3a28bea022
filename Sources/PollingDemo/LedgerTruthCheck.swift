import AppStoreSimulator
import StatusPolling

/// The ledger (`subscription_transactions`) against the simulator's truth after the last night:
/// every transaction it holds is one the App Store has, of the chain, product and purchase date
/// it names; what Apple's signed data carried — price, currency, storefront, offer — is the App
/// Store's exactly (so the report's revenue and conversion are), and a price is never guessed
/// where no answer carried one (verifyReceipt has none); its revocation is the one in force when
/// its values were Apple's (`as_of`).
public struct LedgerTruthCheck: Sendable {
    public var transactions = 0
    /// Transactions with a price, and the currencies they came in.
    public var priced = 0
    public var currencies: Set<String> = []
    /// Transactions bought with an offer, by `offerType`.
    public var offers: [Int: Int] = [:]
    public var revoked = 0
    /// Transactions marked as recoveries from billing retry, and the App Store's recoveries the
    /// ledger holds unmarked.
    public var recoveries = 0
    public var recoveriesSeenAsRenewals = 0
    public var disagreements: [String] = []

    /// Walks the ledger page by page.
    public static func run(store: any SubscriberDirectory, population: Population) async throws -> LedgerTruthCheck {
        var check = LedgerTruthCheck()
        var cursor = ""
        while true {
            let page = try await store.ledger(after: cursor, limit: 1000)
            for record in page { check.inspect(record, population: population) }
            guard let last = page.last else { return check }
            cursor = last.transactionID
        }
    }

    mutating func inspect(_ r: LedgerRecord, population: Population) {
        transactions += 1
        func disagree(_ what: String) { disagreements.append("transaction \(r.transactionID): \(what)") }
        guard let (_, chain, t) = population.transaction(id: r.transactionID) else { return disagree("the App Store has no such transaction") }
        if chain.originalTransactionID != r.originalTransactionID { disagree("chain \(r.originalTransactionID), Apple's is \(chain.originalTransactionID)") }
        if r.productID != t.productID { disagree("product \(r.productID ?? "NULL"), Apple's is \(t.productID)") }
        if r.purchasedAtMs != t.purchaseMs { disagree("purchased at \(r.purchasedAtMs.map(String.init) ?? "NULL"), Apple's is \(t.purchaseMs)") }
        let storefront = Storefront.of(chain), offer = SimulatedOffer.of(t, in: chain)
        if let price = r.price {
            priced += 1
            currencies.insert(r.currency ?? "")
            let truth = SimulatedOffer.price(t, in: chain)
            if price != Int64(truth) || r.currency != storefront.currency || r.storefront != storefront.code {
                disagree("price \(price) \(r.currency ?? "NULL") in \(r.storefront ?? "NULL"), Apple's is \(truth) \(storefront.currency) in \(storefront.code)")
            }
            // A signed transaction names its offer, or its lack of one (a wrong one is told below).
            if r.offerType == nil, let offer { disagree("no offer, Apple's is of type \(offer.type)") }
        } else if r.currency != nil || r.storefront != nil {
            disagree("a currency or storefront without a price")
        }
        if let type = r.offerType {
            offers[type, default: 0] += 1
            if type != offer?.type { disagree("offer type \(type), Apple's is \(offer.map { String($0.type) } ?? "NULL")") }
        }
        if let identifier = r.offerIdentifier, identifier != offer?.identifier { disagree("offer \(identifier), Apple's is \(offer?.identifier ?? "NULL")") }
        if let discount = r.offerDiscountType, discount != offer?.discountType {
            disagree("offer discount \(discount), Apple's is \(offer?.discountType ?? "NULL")")
        }
        if r.revokedAtMs != nil { revoked += 1 }
        // A recovery the ledger marks is one the App Store made with this transaction; one the
        // poller did not see as such (it came before the row was watched, or nothing looked during
        // the retry: a renewal, to the poller) is counted apart.
        let recovered = chain.billingRetries.contains { $0.recovered && $0.endMs == t.purchaseMs }
        if r.isBillingRecovery {
            recoveries += 1
            if !recovered { disagree("marked a recovery from billing retry, but the App Store renewed it on schedule") }
        } else if recovered {
            recoveriesSeenAsRenewals += 1
        }
        if r.isUpgraded {
            if (t.upgradedAtMs ?? .max) > r.asOfMs { disagree("upgraded, but not by its as-of \(r.asOfMs)") }
        } else if r.revokedAtMs != t.refund(at: r.asOfMs) {
            disagree("revoked at \(r.revokedAtMs.map(String.init) ?? "NULL"), Apple's at its as-of \(r.asOfMs) is \(t.refund(at: r.asOfMs).map(String.init) ?? "NULL")")
        }
    }

    /// The summary's lines.
    var lines: [String] {
        let offerNames = [1: "introductory", 2: "promotional", 3: "offer code", 4: "win-back"]
        let offered = offers.keys.sorted().map { "\(offers[$0]!.formatted()) \(offerNames[$0] ?? "type \($0)")" }.joined(separator: ", ")
        var lines = [
            "Ledger: \((transactions - Set(disagreements.map { $0.prefix { $0 != ":" } }).count).formatted()) / \(transactions.formatted()) transactions agree with the App Store"
                + " (\(priced.formatted()) priced\(currencies.isEmpty ? "" : " in " + currencies.sorted().joined(separator: ", ")), the rest price unknown: no signed answer carried one;"
                + " offers: \(offered.isEmpty ? "none" : offered); \(revoked.formatted()) revoked; \(recoveries.formatted()) recoveries from billing retry,"
                + " \(recoveriesSeenAsRenewals.formatted()) more not seen as such: before the row was watched, or no look during the retry).",
        ]
        for disagreement in disagreements.prefix(20) { lines.append("  \(disagreement)") }
        if disagreements.count > 20 { lines.append("  … and \(disagreements.count - 20) more") }
        return lines
    }
}
