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

    /// Generates the history until the configured horizon: the chain's life, then the refund
    /// requests that leave it as it was (of an earlier period, declined ones, reversals).
    mutating func generate(product initial: SimulatedProduct, firstPurchaseMs: Int64, trial: Bool, introOffer: Bool) -> SimulatedChain {
        live(product: initial, firstPurchaseMs: firstPurchaseMs, trial: trial, introOffer: introOffer)
        addRefundRequests()
        return chain
    }

    /// The chain's life: purchases, renewals, billing failures, churn, refunds, upgrades, lapses.
    private mutating func live(product initial: SimulatedProduct, firstPurchaseMs: Int64, trial: Bool, introOffer: Bool) {
        var product = initial
        chain.autoRenew.append(.init(atMs: firstPurchaseMs, value: true))
        chain.autoRenewProduct.append(.init(atMs: firstPurchaseMs, value: product.id))
        var start = firstPurchaseMs
        var end = start + (trial ? Catalog.trialMs : product.durationMs)
        add(product, purchaseMs: start, expiresMs: end, trial: trial, introOffer: introOffer && !trial)
        var isTrial = trial

        while start < configuration.horizonMs {
            // While the period's transaction exists: one recovered inside the grace period is bought
            // after the period began, and a refund or an upgrade before it would be of nothing.
            let from = max(start, chain.transactions[chain.transactions.count - 1].purchaseMs) + hour
            let middle = from...max(from, end - hour)
            // A Family Sharing member loses access when the purchaser stops sharing, leaves the
            // family or is refunded (`REVOKE`), drawn apart so other chains keep their draws.
            var sharing = SeededRandom(seed: configuration.seed ^ 0xFA31_17E5, stableHash(chain.originalTransactionID), UInt64(bitPattern: start))
            // At most one mid-period event, drawn in this order.
            if chain.isFamilyShared, sharing.chance(configuration.familyRevokeRate) {
                revokeCurrent(at: sharing.time(in: middle))
            } else if !isTrial, random.chance(configuration.refundRate) {
                // Apple support refunds the current period (in a member's chain: the purchaser's, a revoke).
                revokeCurrent(at: random.time(in: middle))
            } else if product == Catalog.monthly || product == Catalog.yearly,
                random.chance(product == Catalog.yearly ? configuration.yearlyUpgradeRate : configuration.upgradeRate)
            {
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
                guard let back = resubscribe(after: end) else { return }
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
                guard let back = resubscribe(after: retryEnd) else { return }
                (start, end, product) = back
            }
        }
    }

    /// The current period refunded (or, for a member, revoked) at `at`: access ends at once, and
    /// auto-renew with it (Apple turns it off after a refund).
    private mutating func revokeCurrent(at: Int64) {
        chain.transactions[chain.transactions.count - 1].refundedAtMs = at
        chain.autoRenew.append(.init(atMs: at, value: false))
    }

    /// Refund requests that change no access, each drawn apart by transaction id, so the chain's
    /// life stays the same whatever their rates: a refund of an earlier period while the customer
    /// keeps subscribing (`CONSUMPTION_REQUEST`, then `REFUND` of that earlier transaction), a
    /// request Apple declines (`CONSUMPTION_REQUEST`, then `REFUND_DECLINED`), and Apple reversing a
    /// refund it granted (`REFUND_REVERSED`: of the current period before it ends, which gives the
    /// access back, or of an earlier one). A member of a family pays nothing and asks for nothing.
    private mutating func addRefundRequests() {
        guard !chain.isFamilyShared else { return }
        let answer = (12 * hour)...(48 * hour)
        for index in chain.transactions.indices {
            let t = chain.transactions[index]
            guard !t.isTrial, t.refundedAtMs == nil else { continue }
            var draw = SeededRandom(seed: configuration.seed ^ 0x2EF0_4D5E, stableHash(t.transactionID))
            if draw.chance(configuration.earlierRefundRate), t.upgradedAtMs == nil, index + 1 < chain.transactions.count {
                // Asked during the next period, which runs on untouched until after the answer.
                let next = chain.transactions[index + 1]
                let from = max(next.purchaseMs, t.expiresMs) + hour
                let to = min(next.expiresMs, next.upgradedAtMs ?? .max, next.refundedAtMs ?? .max) - 3 * day
                guard from < to else { continue }
                let asked = draw.time(in: from...to)
                chain.transactions[index].refundRequestedAtMs = asked
                chain.transactions[index].refundedAtMs = asked + draw.time(in: answer)
                chain.transactions[index].refundReason = 1
            } else if draw.chance(configuration.refundDeclinedRate) {
                // Asked during its own period; Apple says no.
                let from = t.purchaseMs + hour
                let to = min(t.expiresMs, t.upgradedAtMs ?? .max) - 3 * day
                guard from < to else { continue }
                let asked = draw.time(in: from...to)
                chain.transactions[index].refundRequestedAtMs = asked
                chain.transactions[index].refundDeclinedAtMs = asked + draw.time(in: answer)
            }
        }
        for index in chain.transactions.indices {
            let t = chain.transactions[index]
            guard let refunded = t.refundedAtMs else { continue }
            var draw = SeededRandom(seed: configuration.seed ^ 0x4E7E_45ED, stableHash(t.transactionID))
            guard draw.chance(configuration.refundReversedRate) else { continue }
            if t.refundRequestedAtMs != nil {
                chain.transactions[index].refundReversedAtMs = refunded + draw.time(in: day...(10 * day))
            } else if refunded + 12 * hour < t.expiresMs - 30 * hour {
                // Before the period ends, so the customer has the rest of it back.
                chain.transactions[index].refundReversedAtMs = draw.time(in: (refunded + 12 * hour)...(t.expiresMs - 30 * hour))
            }
        }
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
