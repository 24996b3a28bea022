import Foundation

/// Writes the App Store Server API's payloads the way Apple does — dates as JSON numbers of
/// milliseconds, camelCase names — from the same chain history and by the same rules as
/// ``ResponseBuilder`` writes verifyReceipt's, so both APIs describe one truth. Plain
/// dictionaries on purpose: the simulator shares no Codable type with the poller.
enum ServerAPIResponseBuilder {
    /// A page of Get Transaction History holds at most this many transactions, as Apple's.
    static let pageSize = 20

    /// `status` of `lastTransactions` for a truth state: 1 active, 2 expired, 3 billing retry,
    /// 4 billing grace period, 5 revoked.
    static func status(_ state: String) -> Int {
        switch state {
        case "active": return 1
        case "billing_retry": return 3
        case "grace_period": return 4
        case "refunded": return 5
        default: return 2
        }
    }

    /// JWSTransactionDecodedPayload of `t` at `ms`.
    static func transaction(_ t: SimulatedChain.Transaction, chain: SimulatedChain, environment: String, bundleID: String, at ms: Int64) -> [String: Any] {
        let first = chain.transactions.first { $0.purchaseMs <= ms } ?? t
        // The customer bought the first one, a resubscription and an upgrade; the App Store renewed the rest.
        let purchased = t.transactionID == first.transactionID || chain.purchases.contains { $0.atMs == t.purchaseMs }
        let storefront = Storefront.of(chain)
        var o: [String: Any] = [
            "transactionId": t.transactionID, "originalTransactionId": chain.originalTransactionID,
            "webOrderLineItemId": "9\(t.transactionID)", "bundleId": bundleID, "productId": t.productID,
            "subscriptionGroupIdentifier": chain.groupID, "purchaseDate": t.purchaseMs,
            "originalPurchaseDate": first.purchaseMs, "expiresDate": t.expiresMs, "quantity": 1,
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": chain.ownershipType, "signedDate": ms,
            "environment": environment, "transactionReason": purchased ? "PURCHASE" : "RENEWAL",
            "storefront": storefront.code, "storefrontId": storefront.id, "currency": storefront.currency, "price": SimulatedOffer.price(t, in: chain),
        ]
        if let offer = SimulatedOffer.of(t, in: chain) {
            o["offerType"] = offer.type
            o["offerDiscountType"] = offer.discountType
            o["offerPeriod"] = offer.period
            if let identifier = offer.identifier { o["offerIdentifier"] = identifier }
        }
        if let upgraded = t.upgradedAtMs, upgraded <= ms {
            o["isUpgraded"] = true
        } else if let refunded = t.refund(at: ms) {
            // Refunded (this period or an earlier one) or, for a member, revoked; signed again
            // without these once Apple reverses the refund.
            o["revocationDate"] = refunded
            o["revocationReason"] = t.refundReason
            o["revocationType"] = chain.isFamilyShared ? "FAMILY_REVOKE" : "REFUND_FULL"
        }
        return o
    }

    /// JWSRenewalInfoDecodedPayload of `chain` at `ms`, with the presence rules of
    /// ``ResponseBuilder/renewal(_:current:at:)``.
    static func renewal(_ chain: SimulatedChain, current: SimulatedChain.Transaction, environment: String, at ms: Int64) -> [String: Any] {
        var o: [String: Any] = [
            "originalTransactionId": chain.originalTransactionID, "productId": current.productID,
            "autoRenewProductId": chain.latest(chain.autoRenewProduct, at: ms) ?? current.productID,
            "autoRenewStatus": (chain.latest(chain.autoRenew, at: ms) ?? true) ? 1 : 0,
            "signedDate": ms, "environment": environment,
            "recentSubscriptionStartDate": recentSubscriptionStart(chain, at: ms), "renewalDate": current.expiresMs,
        ]
        let retry = chain.billingRetry(at: ms)
        if current.expiresMs <= ms {
            // These two appear only once the subscription has ended, as in verifyReceipt's answer.
            o["isInBillingRetryPeriod"] = retry != nil
            if let intent = chain.expirationIntent(at: ms) { o["expirationIntent"] = intent }
        }
        if let grace = retry?.graceEndMs, grace > ms { o["gracePeriodExpiresDate"] = grace }
        return o
    }

    /// Apple's `recentSubscriptionStartDate`: the start of the latest run of paid service, a gap
    /// of less than 60 days not breaking a run.
    static func recentSubscriptionStart(_ chain: SimulatedChain, at ms: Int64) -> Int64 {
        var start: Int64?
        var coveredUntil = Int64.min
        for t in chain.transactions where t.purchaseMs <= ms {
            if start == nil || t.purchaseMs > coveredUntil + 60 * Catalog.dayMs { start = t.purchaseMs }
            coveredUntil = max(coveredUntil, t.expiresMs)
        }
        return start ?? 0
    }

    /// The answer's common head; `appAppleId` only in production, as Apple.
    static func head(environment: String, configuration: PopulationConfiguration) -> [String: Any] {
        var o: [String: Any] = ["environment": environment, "bundleId": configuration.bundleID]
        if environment == "Production" { o["appAppleId"] = configuration.appAppleID }
        return o
    }

    /// StatusResponse: one `lastTransactions` entry per chain visible at `ms`, grouped by
    /// subscription group; `statuses`, when given, keeps only those status values.
    static func statuses(
        _ subscriber: SimulatedSubscriber, at ms: Int64, configuration: PopulationConfiguration, statuses filter: Set<Int>?,
        sign: (_ payload: [String: Any]) -> String
    ) -> [String: Any] {
        var groups: [String] = []
        var lastByGroup: [String: [[String: Any]]] = [:]
        for chain in subscriber.chains {
            guard let current = chain.current(at: ms),
                let truth = chain.entitlement(at: ms, environment: subscriber.environment, latestReceipt: "")
            else { continue }
            let code = status(truth.state)
            if let filter, !filter.contains(code) { continue }
            if lastByGroup[chain.groupID] == nil { groups.append(chain.groupID) }
            lastByGroup[chain.groupID, default: []].append([
                "status": code, "originalTransactionId": chain.originalTransactionID,
                "signedTransactionInfo": sign(transaction(current, chain: chain, environment: subscriber.environment, bundleID: configuration.bundleID, at: ms)),
                "signedRenewalInfo": sign(renewal(chain, current: current, environment: subscriber.environment, at: ms)),
            ])
        }
        var o = head(environment: subscriber.environment, configuration: configuration)
        o["data"] = groups.map { ["subscriptionGroupIdentifier": $0, "lastTransactions": lastByGroup[$0] ?? []] as [String: Any] }
        return o
    }

    /// HistoryResponse: the page from `offset` of every transaction of every chain visible at
    /// `ms`, by purchase date (then id), newest first when `descending`.
    static func history(
        _ subscriber: SimulatedSubscriber, at ms: Int64, configuration: PopulationConfiguration, offset: Int, descending: Bool,
        sign: (_ payload: [String: Any]) -> String
    ) -> [String: Any] {
        var all = subscriber.chains.flatMap { chain in chain.transactions.filter { $0.purchaseMs <= ms }.map { (chain, $0) } }
        all.sort { ($0.1.purchaseMs, $0.1.transactionID) < ($1.1.purchaseMs, $1.1.transactionID) }
        if descending { all.reverse() }
        let start = min(max(offset, 0), all.count)
        let page = all[start..<min(start + pageSize, all.count)]
        var o = head(environment: subscriber.environment, configuration: configuration)
        o["signedTransactions"] = page.map { chain, t in
            sign(transaction(t, chain: chain, environment: subscriber.environment, bundleID: configuration.bundleID, at: ms))
        }
        o["hasMore"] = start + page.count < all.count
        o["revision"] = HistoryRevision(offset: start + page.count).token
        return o
    }
}
