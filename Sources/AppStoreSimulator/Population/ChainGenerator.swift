/// Writes one chain's history forward from its first purchase, drawing each event from the
/// population's rates with the subscriber's own generator.
struct ChainGenerator {
    let configuration: PopulationConfiguration
    var random: SeededRandom
    var chain: SimulatedChain
    private var transactionCount = 0
    private let hour: Int64 = 3_600_000
    private let day = Catalog.dayMs

    init(configuration: PopulationConfiguration, random: SeededRandom, originalTransactionID: String, groupID: String) {
        self.configuration = configuration
        self.random = random
        self.chain = SimulatedChain(originalTransactionID: originalTransactionID, groupID: groupID)
    }

    /// Generates the history until the configured horizon.
    mutating func generate(product initial: SimulatedProduct, firstPurchaseMs: Int64, trial: Bool, introOffer: Bool) -> SimulatedChain {
        var product = initial
        chain.autoRenew.append(.init(atMs: firstPurchaseMs, value: true))
        chain.autoRenewProduct.append(.init(atMs: firstPurchaseMs, value: product.id))
        var start = firstPurchaseMs
        var end = start + (trial ? Catalog.trialMs : product.durationMs)
        add(product, purchaseMs: start, expiresMs: end, trial: trial, introOffer: introOffer && !trial)
        var isTrial = trial

        while start < configuration.horizonMs {
            let middle = (start + hour)...(max(start + hour, end - hour))
            // At most one mid-period event, drawn in this order.
            if !isTrial, random.chance(configuration.refundRate) {
                let at = random.time(in: middle)
                chain.transactions[chain.transactions.count - 1].refundedAtMs = at
                chain.autoRenew.append(.init(atMs: at, value: false))
            } else if product == Catalog.monthly || product == Catalog.yearly, random.chance(configuration.upgradeRate) {
                // Upgrade to the higher tier: takes effect at once; the old transaction is marked
                // upgraded and cancelled. From yearly, the upgraded transaction still expires months
                // after the new one: a poller that ignores `is_upgraded` keeps the old expiry.
                let at = random.time(in: middle)
                chain.transactions[chain.transactions.count - 1].upgradedAtMs = at
                product = Catalog.proMonthly
                chain.autoRenewProduct.append(.init(atMs: at, value: product.id))
                recordPurchase(.upgrade, at: at)
                start = at
                end = at + product.durationMs
                add(product, purchaseMs: at, expiresMs: end)
                isTrial = false
                continue
            } else if product == Catalog.proMonthly, random.chance(configuration.downgradeRate) {
                // Downgrade: takes effect at the next renewal.
                chain.autoRenewProduct.append(.init(atMs: random.time(in: middle), value: Catalog.monthly.id))
            } else if random.chance(configuration.churnRate) {
                chain.autoRenew.append(.init(atMs: random.time(in: middle), value: false))
            }

            isTrial = false
            if chain.latest(chain.autoRenew, at: end) == false {
                chain.lapses.append(.init(atMs: end, intent: 1))
                guard let back = resubscribe(after: end) else { return chain }
                (start, end, product) = back
                continue
            }
            product = Catalog.product(chain.latest(chain.autoRenewProduct, at: end) ?? product.id)
            guard random.chance(configuration.billingFailureRate) else {
                // Apple charges within the 24 hours before expiry; the new period starts at expiry.
                add(product, purchaseMs: end - random.time(in: 0...day), expiresMs: end + product.durationMs)
                start = end
                end += product.durationMs
                continue
            }
            let graceEnd = configuration.gracePeriodDays > 0 ? end + Int64(configuration.gracePeriodDays) * day : nil
            let retryEnd = end + Int64(configuration.billingRetryDays) * day
            chain.lapses.append(.init(atMs: end, intent: 2))
            if random.chance(configuration.recoveryRate) {
                // Most recoveries come early: the draw is skewed towards the start of the retry window.
                let u = Double.random(in: 0..<1, using: &random)
                let recoveredAt = min(end + hour + Int64(Double(retryEnd - end) * u * u), retryEnd - hour)
                chain.billingRetries.append(.init(startMs: end, endMs: recoveredAt, graceEndMs: graceEnd, recovered: true))
                // Recovered inside the grace period: the renewal date does not move. Later: it does.
                let periodStart = graceEnd.map { recoveredAt < $0 } == true ? end : recoveredAt
                add(product, purchaseMs: recoveredAt, expiresMs: periodStart + product.durationMs)
                start = periodStart
                end = periodStart + product.durationMs
            } else {
                chain.billingRetries.append(.init(startMs: end, endMs: retryEnd, graceEndMs: graceEnd, recovered: false))
                guard let back = resubscribe(after: retryEnd) else { return chain }
                (start, end, product) = back
            }
        }
        return chain
    }

    /// A lapsed subscriber may buy again in the app (same chain, same group).
    private mutating func resubscribe(after lapseMs: Int64) -> (Int64, Int64, SimulatedProduct)? {
        guard random.chance(configuration.resubscribeRate) else { return nil }
        let at = lapseMs + random.time(in: day...(60 * day))
        guard at < configuration.horizonMs else { return nil }
        let product = Catalog.product(chain.latest(chain.autoRenewProduct, at: at) ?? Catalog.monthly.id)
        chain.autoRenew.append(.init(atMs: at, value: true))
        chain.autoRenewProduct.append(.init(atMs: at, value: product.id))
        recordPurchase(.resubscription, at: at)
        add(product, purchaseMs: at, expiresMs: at + product.durationMs)
        return (at, at + product.durationMs, product)
    }

    /// Whether the customer bought in the app or in the App Store is drawn from a generator of
    /// its own, so the share changes no other draw: a seed's population stays the same.
    private mutating func recordPurchase(_ kind: SimulatedChain.Purchase.Kind, at ms: Int64) {
        var draw = SeededRandom(seed: configuration.seed, stableHash(chain.originalTransactionID), UInt64(bitPattern: ms))
        let outside = draw.chance(configuration.resubscribeOutsideAppRate)
        chain.purchases.append(.init(atMs: ms, kind: kind, inApp: !outside))
    }

    private mutating func add(_ product: SimulatedProduct, purchaseMs: Int64, expiresMs: Int64, trial: Bool = false, introOffer: Bool = false) {
        transactionCount += 1
        let id = chain.transactionCount(base: chain.originalTransactionID, number: transactionCount)
        chain.transactions.append(.init(
            transactionID: id, productID: product.id, purchaseMs: purchaseMs, expiresMs: expiresMs,
            isTrial: trial, isIntroOffer: introOffer))
    }
}

extension SimulatedChain {
    /// Transaction ids extend the original one, as numeric strings like Apple's; the first equals it.
    func transactionCount(base: String, number: Int) -> String {
        guard number > 1 else { return base }
        let suffix = String(number)
        return base + String(repeating: "0", count: max(0, 4 - suffix.count)) + suffix
    }
}
