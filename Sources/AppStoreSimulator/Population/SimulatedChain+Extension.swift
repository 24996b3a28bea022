/// Extending a subscription's renewal date, by Apple's rules: an active, paid period moves its
/// expiry (and everything the chain recorded from then on) by whole days, at most 90, at most
/// twice in any 365 days.
extension SimulatedChain {
    /// One extension Apple granted.
    public struct RenewalExtension: Sendable, Equatable {
        public var atMs: Int64
        public var days: Int
        public var requestIdentifier: String
        /// The extended period's transaction and its new `expiresDate` (Apple's `effectiveDate`).
        public var transactionID: String
        public var effectiveDateMs: Int64
    }

    /// Why Apple refuses an extension, with its `errorCode`.
    enum ExtensionRefusal: Int, Error {
        /// SubscriptionExtensionIneligibleError: free offer, billing retry, expired, refunded.
        case ineligible = 4_030_004
        /// SubscriptionMaxExtensionError: two extensions in the past 365 days.
        case maxExtensions = 4_030_005
        /// FamilySharedSubscriptionExtensionIneligibleError: a Family Sharing member's chain.
        case familyShared = 4_030_007
    }

    /// Apple's refusal of an extension at `ms`, nil when the chain may be extended. A Family
    /// Sharing member's chain is refused alone but extended with a mass request.
    func extensionRefusal(at ms: Int64, familyMembersIncluded: Bool = false) -> ExtensionRefusal? {
        if isFamilyShared, !familyMembersIncluded { return .familyShared }
        guard let current = current(at: ms), current.expiresMs > ms, current.refund(at: ms) == nil, !current.isTrial, billingRetry(at: ms) == nil
        else { return .ineligible }
        if extensions.filter({ $0.atMs > ms - 365 * Catalog.dayMs }).count >= 2 { return .maxExtensions }
        return nil
    }

    /// Extends the period current at `ms` by `days`: its expiry and every instant the chain
    /// recorded from its next charge or the old expiry on (renewals, retries, lapses, changes) move
    /// by as much.
    mutating func extendRenewal(
        at ms: Int64, days: Int, requestIdentifier: String, familyMembersIncluded: Bool = false
    ) -> Result<RenewalExtension, ExtensionRefusal> {
        if let refusal = extensionRefusal(at: ms, familyMembersIncluded: familyMembersIncluded) { return .failure(refusal) }
        let current = current(at: ms)!
        let old = current.expiresMs, by = Int64(days) * Catalog.dayMs
        // The App Store charges a renewal a little before the period ends: that charge moves too.
        let from = min(old, transactions.filter { $0.purchaseMs > ms }.map(\.purchaseMs).min() ?? old)
        func moved(_ t: Int64) -> Int64 { t >= from ? t + by : t }
        func moved(_ t: Int64?) -> Int64? { t.map(moved) }
        for index in transactions.indices {
            var t = transactions[index]
            t.purchaseMs = moved(t.purchaseMs)
            t.expiresMs = moved(t.expiresMs)
            t.refundedAtMs = moved(t.refundedAtMs)
            t.refundRequestedAtMs = moved(t.refundRequestedAtMs)
            t.refundDeclinedAtMs = moved(t.refundDeclinedAtMs)
            t.refundReversedAtMs = moved(t.refundReversedAtMs)
            t.upgradedAtMs = moved(t.upgradedAtMs)
            transactions[index] = t
        }
        for index in autoRenew.indices { autoRenew[index].atMs = moved(autoRenew[index].atMs) }
        for index in autoRenewProduct.indices { autoRenewProduct[index].atMs = moved(autoRenewProduct[index].atMs) }
        for index in billingRetries.indices {
            billingRetries[index].startMs = moved(billingRetries[index].startMs)
            billingRetries[index].endMs = moved(billingRetries[index].endMs)
            billingRetries[index].graceEndMs = moved(billingRetries[index].graceEndMs)
        }
        for index in lapses.indices { lapses[index].atMs = moved(lapses[index].atMs) }
        for index in purchases.indices { purchases[index].atMs = moved(purchases[index].atMs) }
        let granted = RenewalExtension(atMs: ms, days: days, requestIdentifier: requestIdentifier, transactionID: current.transactionID, effectiveDateMs: old + by)
        extensions.append(granted)
        return .success(granted)
    }
}
