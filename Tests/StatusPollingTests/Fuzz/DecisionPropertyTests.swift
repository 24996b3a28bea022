import AppStoreSimulator
import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Properties of the entitlement decision over seeded random answers: Apple promises no order of
/// its entries, so order must never matter; and an answer that does not hold the row's chain (another
/// receipt was uploaded, a near-miss id) must never change the row.
///
/// The answers keep the invariants Apple's do — transaction ids are unique, and each chain has at
/// most one `pending_renewal_info` entry — and vary everything else: ties in expiry and purchase
/// dates, refunds, upgrades, consumables, entries without a chain, renewal info for chains that have
/// no transaction, other bundles. The seed is injectable (`STATUS_POLLER_PROPERTY_SEED`).
@Suite struct DecisionPropertyTests {
    /// Fixed, so every run checks the same answers; `STATUS_POLLER_PROPERTY_SEED` replays another.
    static let seed: UInt64 = {
        let fallback: UInt64 = 0x0DEC_1510
        guard let text = ProcessInfo.processInfo.environment["STATUS_POLLER_PROPERTY_SEED"] else { return fallback }
        return (text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)) ?? fallback
    }()

    static let cases = 2_000
    /// Orders tried per answer.
    static let shuffles = 4

    @Test(arguments: [seed])
    func theOrderOfTransactionsAndRenewalsNeverMatters(seed: UInt64) {
        var outcomes: [String: Int] = [:]
        var failures: [String] = []
        for index in 0..<Self.cases {
            var rng = SeededRandom(seed: seed, 1, UInt64(index))
            let answer = Self.answer(&rng)
            let row = Self.row(for: answer, &rng)
            let outcome = Self.decide(answer, row)
            outcomes[Self.label(outcome), default: 0] += 1
            // Reversed (a different order whenever there are two entries), then random orders.
            var reversed = answer
            reversed.transactions.reverse()
            reversed.renewals.reverse()
            var orders = [reversed]
            for _ in 0..<Self.shuffles {
                var shuffled = answer
                shuffled.transactions.shuffle(using: &rng)
                shuffled.renewals.shuffle(using: &rng)
                orders.append(shuffled)
            }
            for other in orders.map({ Self.decide($0, row) }) where other != outcome {
                failures.append("#\(index): \(outcome) became \(other) in another order")
            }
        }
        #expect(failures.isEmpty, "seed \(seed): \(failures.count) orders decided otherwise:\n\(failures.prefix(10).joined(separator: "\n"))")
        // Not vacuous: every kind of outcome was reached.
        #expect(Set(outcomes.keys) == ["adopt", "reject:bundle_mismatch", "reject:chain_not_in_receipt", "reject:no_subscription_in_receipt"], "\(outcomes)")
        #expect(outcomes.values.reduce(0, +) == Self.cases)
    }

    @Test(arguments: [seed])
    func anAnswerWithoutTheRowsChainNeverChangesTheRow(seed: UInt64) {
        var failures: [String] = []
        var byReason: [VerificationFailure.Reason: Int] = [:]
        for index in 0..<Self.cases {
            var rng = SeededRandom(seed: seed, 2, UInt64(index))
            var answer = Self.answer(&rng)
            let owned = Self.foreignChain(for: answer, &rng)
            // The row's id may still appear where it is no subscription: a consumable, renewal info alone.
            if rng.chance(0.3) { answer.transactions.append(SubscriptionTransaction(productID: "coins.100", transactionID: "t-c-\(index)", originalTransactionID: owned, expiresDateMs: nil)) }
            if rng.chance(0.3) { answer.renewals.append(SubscriptionRenewalInfo(originalTransactionID: owned, autoRenewStatus: true)) }
            answer.transactions.shuffle(using: &rng)
            answer.renewals.shuffle(using: &rng)

            let row = SubscriptionRow(id: 9, userID: "user-9", latestReceipt: "OLD", state: Self.state(owning: owned, &rng))
            let outcome = Self.decide(answer, row)
            let expectedReason: VerificationFailure.Reason = answer.bundleID == AppleJSON.bundleID ? .chainNotInReceipt : .bundleMismatch
            guard case .reject(let failure) = outcome, failure.reason == expectedReason else {
                failures.append("#\(index): row on \(owned.debugDescription) got \(outcome), expected a \(expectedReason.rawValue) rejection")
                continue
            }
            byReason[failure.reason, default: 0] += 1
            // The refusal depends on nothing else of the row, and on no order.
            let otherRow = SubscriptionRow(id: 10, userID: "user-10", latestReceipt: "OTHER", state: Self.state(owning: owned, &rng), receiptUploaded: true)
            var shuffled = answer
            shuffled.transactions.shuffle(using: &rng)
            shuffled.renewals.shuffle(using: &rng)
            for (name, other) in [("another row on the same chain", Self.decide(answer, otherRow)), ("another order", Self.decide(shuffled, row))] where other != outcome {
                failures.append("#\(index): \(name) decided \(other), not \(outcome)")
            }
        }
        #expect(failures.isEmpty, "seed \(seed): \(failures.count) cases:\n\(failures.prefix(10).joined(separator: "\n"))")
        #expect(byReason.values.reduce(0, +) == Self.cases)
        #expect(Set(byReason.keys) == [.chainNotInReceipt, .bundleMismatch])
    }
}

extension DecisionPropertyTests {
    static func decide(_ answer: StatusAnswer, _ row: SubscriptionRow) -> EntitlementDecision.Outcome {
        EntitlementDecision.decide(answer: answer, row: row, bundleID: AppleJSON.bundleID)
    }

    static func label(_ outcome: EntitlementDecision.Outcome) -> String {
        switch outcome {
        case .adopt: "adopt"
        case .reject(let failure): "reject:\(failure.reason.rawValue)"
        }
    }

    /// Ids of the same length, so a prefix or an extension of one is never another.
    static let chainPool = (1...12).map { "10000000\(String(format: "%02d", $0))" }

    /// A random answer: zero to four chains of one to five transactions on a coarse grid of dates (so
    /// expiries and purchases tie), refunds, upgrades, entries that are no subscription, and at most
    /// one renewal info per chain.
    static func answer(_ rng: inout SeededRandom) -> StatusAnswer {
        let (t0, day) = (AppleJSON.t0, AppleJSON.day)
        let chains = Array(chainPool.shuffled(using: &rng).prefix(Int.random(in: 0...4, using: &rng)))
        let products = ["premium.monthly", "premium.yearly", "pro.monthly"]
        var transactions: [SubscriptionTransaction] = []
        var serial = 0
        func transactionID() -> String {
            serial += 1
            return "t-\(serial)"
        }
        for chain in chains {
            for _ in 0..<Int.random(in: 1...5, using: &rng) {
                transactions.append(SubscriptionTransaction(
                    productID: rng.chance(0.95) ? products.randomElement(using: &rng) : nil,
                    transactionID: transactionID(),
                    originalTransactionID: chain,
                    purchaseDateMs: rng.chance(0.95) ? t0 + Int64.random(in: 0...4, using: &rng) * 30 * day : nil,
                    expiresDateMs: rng.chance(0.9) ? t0 + Int64.random(in: 1...5, using: &rng) * 30 * day : nil,
                    revocationDateMs: rng.chance(0.1) ? t0 + Int64.random(in: 1...60, using: &rng) * day : nil,
                    isUpgraded: rng.chance(0.15)))
            }
        }
        for _ in 0..<(rng.chance(0.25) ? Int.random(in: 1...2, using: &rng) : 0) {
            // Not subscriptions: no chain, an empty chain id, or no expiry.
            let chain = [nil, "", "2000000001"].randomElement(using: &rng)!
            transactions.append(SubscriptionTransaction(
                productID: "coins.100", transactionID: transactionID(), originalTransactionID: chain,
                expiresDateMs: chain == "2000000001" ? nil : t0 + 30 * day))
        }
        var renewals: [SubscriptionRenewalInfo] = []
        let withRenewal = chains.filter { _ in rng.chance(0.8) } + (rng.chance(0.2) ? [chainPool.randomElement(using: &rng)!] : [])
        for chain in Set(withRenewal).sorted() {
            renewals.append(SubscriptionRenewalInfo(
                originalTransactionID: chain,
                productID: products.randomElement(using: &rng),
                autoRenewProductID: rng.chance(0.9) ? products.randomElement(using: &rng) : nil,
                autoRenewStatus: [true, false, nil].randomElement(using: &rng)!,
                expirationIntent: rng.chance(0.3) ? Int.random(in: 1...5, using: &rng) : nil,
                isInBillingRetryPeriod: [true, false, nil].randomElement(using: &rng)!,
                gracePeriodExpiresDateMs: rng.chance(0.2) ? t0 + Int64.random(in: 30...200, using: &rng) * day : nil))
        }
        transactions.shuffle(using: &rng)
        renewals.shuffle(using: &rng)
        let bundleRoll = Double.random(in: 0..<1, using: &rng)
        return StatusAnswer(
            upstreamStatus: .verifyReceipt(.valid),
            bundleID: bundleRoll < 0.85 ? AppleJSON.bundleID : bundleRoll < 0.95 ? "com.other.app" : nil,
            environment: ["Production", "Sandbox", nil].randomElement(using: &rng)!,
            transactions: transactions, renewals: renewals,
            latestReceipt: rng.chance(0.8) ? "LR-\(rng.next() % 10_000)" : nil)
    }

    /// New, on one of the answer's chains, or on a chain the answer does not hold.
    static func row(for answer: StatusAnswer, _ rng: inout SeededRandom) -> SubscriptionRow {
        let held = Set(answer.transactions.compactMap(\.originalTransactionID)).sorted()
        let roll = Double.random(in: 0..<1, using: &rng)
        let state: SubscriptionState
        if roll < 0.4 {
            state = .unverified
        } else if roll < 0.85, let chain = held.randomElement(using: &rng) {
            state = Self.state(owning: chain, &rng)
        } else {
            state = Self.state(owning: foreignChain(for: answer, &rng), &rng)
        }
        return SubscriptionRow(id: 7, userID: "user-7", latestReceipt: "OLD", state: state, receiptUploaded: rng.chance(0.2))
    }

    /// A chain id no dated transaction of the answer holds, often a near miss of one that is held:
    /// a prefix, an extension, a leading zero, padding, the same number written otherwise.
    static func foreignChain(for answer: StatusAnswer, _ rng: inout SeededRandom) -> String {
        let held = Set(answer.transactions.filter { $0.expiresDateMs != nil }.compactMap(\.originalTransactionID))
        let near = held.sorted().randomElement(using: &rng) ?? chainPool[0]
        let candidates = [
            String(near.dropLast()), near + "0", "0" + near, " " + near, near + " ", near + "\n", near + ".0", "+" + near,
            near.replacingOccurrences(of: "1", with: "１"), "", "9999999999",
            chainPool.randomElement(using: &rng)!,
        ].filter { !held.contains($0) }
        return candidates.randomElement(using: &rng)!
    }

    /// Contract columns on `chain`, the rest random.
    static func state(owning chain: String, _ rng: inout SeededRandom) -> SubscriptionState {
        let (t0, day) = (AppleJSON.t0, AppleJSON.day)
        return SubscriptionState(
            originalTransactionID: chain, productID: "premium.monthly", environment: ["Production", "Sandbox"].randomElement(using: &rng)!,
            expiresAt: t0 + Int64.random(in: -30...90, using: &rng) * day,
            gracePeriodExpiresAt: rng.chance(0.2) ? t0 + Int64.random(in: 0...40, using: &rng) * day : nil,
            isInBillingRetry: rng.chance(0.2), autoRenewStatus: [true, false, nil].randomElement(using: &rng)!,
            autoRenewProductID: rng.chance(0.8) ? "premium.monthly" : nil,
            expirationIntent: rng.chance(0.2) ? Int.random(in: 1...5, using: &rng) : nil,
            cancelledAt: rng.chance(0.05) ? t0 : nil)
    }
}
