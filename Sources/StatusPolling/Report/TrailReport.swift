import Foundation

/// What billing retry, grace periods and churn did, read from the audit trail: the numbers of
/// `status-poller report` (its JSON, its CSV series and its page). Built in one pass over the
/// trail by ``TrailReportBuilder``; shares are fractions 0…1, days ISO 8601 UTC dates.
public struct TrailReport: Sendable {
    public var generatedAtMs: Int64
    public var fromMs: Int64
    public var toMs: Int64
    /// `Production`, `Sandbox`, or nil for both.
    public var environment: String?
    /// The median time between the report's nightly runs: an episode shorter than it is invisible.
    public var pollIntervalHours: Double?
    public var episodes: [BillingEpisode]
    public var curve: RecoveryCurve
    public var stateMix: [StateMixDay]
    public var churn: [ChurnPeriod]
    public var movement: [MovementWeek]
    public var refunds: [RefundDay]
    public var refundRates: [RefundRate]
    public var runs: [RunRecord]

    /// Subscriptions by state at the end of `dateMs`'s day.
    public struct StateMixDay: Sendable, Equatable {
        public var dateMs: Int64
        public var counts: [String: Int]
    }

    /// Churned ÷ active at the period's start, by `expiration_intent`.
    public struct ChurnPeriod: Sendable, Equatable {
        /// `week` or `month`.
        public var kind: String
        public var startMs: Int64
        public var activeAtStart: Int
        public var churned: Int
        /// "1"…"5", "refunded", "unknown".
        public var byIntent: [String: Int]
        public var rate: Double? { activeAtStart > 0 ? Double(churned) / Double(activeAtStart) : nil }
    }

    /// What happened in a week (Monday 00:00 UTC).
    public struct MovementWeek: Sendable, Equatable {
        public var startMs: Int64
        public var counts: [String: Int]
    }

    /// Refunds by refund date, and renewals (and new subscriptions) by the day the trail saw them.
    public struct RefundDay: Sendable, Equatable {
        public var dateMs: Int64
        public var refunds: Int
        public var renewals = 0
    }

    /// Refunds by refund date ÷ (renewals + new) in the week; a later refund revises a past week.
    public struct RefundRate: Sendable, Equatable {
        public var startMs: Int64
        public var refunds: Int
        public var paid: Int
        public var rate: Double? { paid > 0 ? Double(refunds) / Double(paid) : nil }
    }

    /// Episodes by how they closed (open ones under "open").
    public var episodeCounts: [String: Int] {
        var counts = Dictionary(uniqueKeysWithValues: (BillingEpisode.Outcome.allCases.map(\.rawValue) + ["open"]).map { ($0, 0) })
        for episode in episodes { counts[episode.outcome?.rawValue ?? "open", default: 0] += 1 }
        return counts
    }

    /// The median whole days from day 0 to recovery, over recovered episodes; nil without any.
    public var medianDaysToRecover: Int? {
        let days = episodes.filter { $0.outcome == .recovered }.map { $0.days(endMs: toMs) }.sorted()
        return days.isEmpty ? nil : days[(days.count - 1) / 2]
    }

    /// The headline days of the recovery curve.
    public static let headlineDays = [3, 7, 16, 28, 60]
}
