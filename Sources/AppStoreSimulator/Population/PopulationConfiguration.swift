/// How the simulated population behaves. Rates are per billing period unless said otherwise;
/// the defaults are in the range app businesses report for monthly subscriptions.
public struct PopulationConfiguration: Sendable, Equatable {
    /// Subscribers in the population.
    public var subscribers: Int
    /// Seed of every draw: the same seed gives the same population and the same faults.
    public var seed: UInt64
    /// The simulated instant the population is built around (ms); first purchases lie before it.
    public var startMs: Int64
    /// Lifecycles are generated up to this instant (ms).
    public var horizonMs: Int64
    /// The app's bundle identifier, in every receipt.
    public var bundleID: String
    /// The app's shared secret; requests with another `password` get 21004.
    public var sharedSecret: String
    /// The app's Apple id (`appAppleId` in the App Store Server API's production answers).
    public var appAppleID: Int64
    /// Billing grace period in days (Apple offers 3, 16 or 28); 0 turns it off.
    public var gracePeriodDays: Int
    /// How long Apple keeps retrying a failed charge.
    public var billingRetryDays: Int

    /// Share of subscribers on the yearly plan, and on the higher tier.
    public var yearlyShare: Double
    public var proShare: Double
    /// Share that started with a free trial, and with an introductory offer.
    public var trialShare: Double
    public var introOfferShare: Double
    /// Share that also subscribes in the second group (two chains in one receipt).
    public var secondGroupShare: Double
    /// Share of sandbox receipts (App Review, TestFlight): production answers 21007.
    public var sandboxShare: Double

    /// The user turns auto-renew off during a period (voluntary churn).
    public var churnRate: Double
    /// The renewal charge fails (billing retry, grace period).
    public var billingFailureRate: Double
    /// A failed charge is recovered before Apple gives up.
    public var recoveryRate: Double
    /// Apple support refunds the current period.
    public var refundRate: Double
    /// A monthly subscriber upgrades to the higher tier mid-period.
    public var upgradeRate: Double
    /// A yearly subscriber upgrades to the monthly higher tier during the year: the new, shorter
    /// period expires months before the upgraded one would have.
    public var yearlyUpgradeRate: Double
    /// A higher-tier subscriber downgrades (takes effect at the next renewal).
    public var downgradeRate: Double
    /// A lapsed subscriber comes back within 60 days.
    public var resubscribeRate: Double
    /// Share of resubscriptions and upgrades bought in the App Store rather than in the app
    /// (its subscription settings, a win-back offer): no receipt is uploaded for them.
    public var resubscribeOutsideAppRate: Double
    /// The customer gets the previous period's charge back while the subscription renews on
    /// (`CONSUMPTION_REQUEST`, then `REFUND` of the earlier transaction; status stays active).
    public var earlierRefundRate: Double
    /// A refund request Apple declines (`CONSUMPTION_REQUEST`, then `REFUND_DECLINED`), per paid period.
    public var refundDeclinedRate: Double
    /// Apple reverses a refund it granted (`REFUND_REVERSED`), per refund.
    public var refundReversedRate: Double
    /// Share of subscribers whose premium subscription is a Family Sharing member's (`FAMILY_SHARED`).
    public var familySharedShare: Double
    /// Per period of a member's subscription, the purchaser stops sharing (`REVOKE`).
    public var familyRevokeRate: Double

    public init(
        subscribers: Int = 3000, seed: UInt64 = 42, startMs: Int64, horizonMs: Int64? = nil,
        bundleID: String = "com.example.premium", sharedSecret: String = "simulator-shared-secret", appAppleID: Int64 = 1_234_567_890,
        gracePeriodDays: Int = 16, billingRetryDays: Int = 60,
        yearlyShare: Double = 0.2, proShare: Double = 0.15, trialShare: Double = 0.25, introOfferShare: Double = 0.1,
        secondGroupShare: Double = 0.08, sandboxShare: Double = 0.02,
        churnRate: Double = 0.06, billingFailureRate: Double = 0.07, recoveryRate: Double = 0.65,
        refundRate: Double = 0.01, upgradeRate: Double = 0.02, downgradeRate: Double = 0.03, resubscribeRate: Double = 0.25,
        resubscribeOutsideAppRate: Double = 0.5, yearlyUpgradeRate: Double = 0.2, earlierRefundRate: Double = 0.007,
        refundDeclinedRate: Double = 0.004, refundReversedRate: Double = 0.25, familySharedShare: Double = 0.03, familyRevokeRate: Double = 0.05
    ) {
        self.subscribers = subscribers
        self.seed = seed
        self.startMs = startMs
        self.horizonMs = horizonMs ?? startMs + 400 * Catalog.dayMs
        self.bundleID = bundleID
        self.sharedSecret = sharedSecret
        self.appAppleID = appAppleID
        self.gracePeriodDays = gracePeriodDays
        self.billingRetryDays = billingRetryDays
        self.yearlyShare = yearlyShare
        self.proShare = proShare
        self.trialShare = trialShare
        self.introOfferShare = introOfferShare
        self.secondGroupShare = secondGroupShare
        self.sandboxShare = sandboxShare
        self.churnRate = churnRate
        self.billingFailureRate = billingFailureRate
        self.recoveryRate = recoveryRate
        self.refundRate = refundRate
        self.upgradeRate = upgradeRate
        self.downgradeRate = downgradeRate
        self.resubscribeRate = resubscribeRate
        self.resubscribeOutsideAppRate = resubscribeOutsideAppRate
        self.yearlyUpgradeRate = yearlyUpgradeRate
        self.earlierRefundRate = earlierRefundRate
        self.refundDeclinedRate = refundDeclinedRate
        self.refundReversedRate = refundReversedRate
        self.familySharedShare = familySharedShare
        self.familyRevokeRate = familyRevokeRate
    }
}

extension PopulationConfiguration {
    /// The rates `--rate NAME=VALUE` can set.
    public static let rateNames = ["churn", "billing_failure", "recovery", "refund", "upgrade", "downgrade", "resubscribe", "resubscribe_outside_app", "sandbox", "second_group", "trial", "yearly",
        "upgrade_from_yearly", "refund_earlier", "refund_declined", "refund_reversed", "family_shared", "family_revoke",
    ]

    /// A copy with rates set from `NAME=VALUE` items; throws on an unknown name or a value outside 0…1.
    public func applying(rates items: [String]) throws -> Self {
        var copy = self
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Double(parts[1]), (0...1).contains(value) else { throw RateError(item: item) }
            switch parts[0] {
            case "churn": copy.churnRate = value
            case "billing_failure": copy.billingFailureRate = value
            case "recovery": copy.recoveryRate = value
            case "refund": copy.refundRate = value
            case "upgrade": copy.upgradeRate = value
            case "downgrade": copy.downgradeRate = value
            case "resubscribe": copy.resubscribeRate = value
            case "resubscribe_outside_app": copy.resubscribeOutsideAppRate = value
            case "sandbox": copy.sandboxShare = value
            case "second_group": copy.secondGroupShare = value
            case "trial": copy.trialShare = value
            case "yearly": copy.yearlyShare = value
            case "upgrade_from_yearly": copy.yearlyUpgradeRate = value
            case "refund_earlier": copy.earlierRefundRate = value
            case "refund_declined": copy.refundDeclinedRate = value
            case "refund_reversed": copy.refundReversedRate = value
            case "family_shared": copy.familySharedShare = value
            case "family_revoke": copy.familyRevokeRate = value
            default: throw RateError(item: item)
            }
        }
        return copy
    }

    /// A `--rate` item that is not NAME=VALUE with a known name and 0 ≤ VALUE ≤ 1.
    public struct RateError: Error, CustomStringConvertible {
        public var item: String
        public var description: String { "--rate takes NAME=VALUE with NAME one of \(PopulationConfiguration.rateNames.joined(separator: ", ")) and 0 ≤ VALUE ≤ 1; got '\(item)'." }
    }
}
