import Foundation

/// What billing retry, grace periods and churn did, read from the audit trail: the numbers of
/// `status-poller report` (its JSON, its CSV series and its page). Built in one pass over the
/// trail by ``TrailReportBuilder``; shares are fractions 0…1, days ISO 8601 UTC dates.
public struct TrailReport: Sendable {
    public var generatedAtMs: Int64
    public var fromMs: Int64
    public var toMs: Int64
    /// When the audit trail the report read starts (its first row's `at`; nil when empty): with
    /// `audit_keep_days` older rows were pruned, so a period before it is not counted.
    public var trailStartsAtMs: Int64?
    /// `Production`, `Sandbox`, or nil for both.
    public var environment: String?
    /// The median time between the report's nightly runs: an episode shorter than it is invisible.
    public var pollIntervalHours: Double?
    public var episodes: EpisodeSummary
    public var curve: RecoveryCurve
    public var stateMix: [StateMixDay]
    public var churn: [ChurnPeriod]
    public var movement: [MovementWeek]
    public var refunds: [RefundDay]
    public var refundRates: [RefundRate]
    public var runs: [RunRecord]
    /// Who brought the trail's changes, by week.
    public var sources: [SourceWeek]
    /// How long Apple's news took to reach a row, over the changes notifications brought.
    public var notificationLag: Lag
    /// Apple's refund requests and the answers sent (filled beside the trail by `report`).
    public var refundRequests = RefundRequestReport()
    /// The ledger's money (filled beside the trail by `report`).
    public var revenue = RevenueReport()

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

    /// The trail's changes of a week (Monday 00:00 UTC) by who brought them — `poll`, `backfill`,
    /// `notification`, `unknown` (written before the trail kept it) — and the notification lag of
    /// the week's notified changes.
    public struct SourceWeek: Sendable, Equatable {
        public var startMs: Int64
        public var counts: [String: Int]
        public var notificationLag: Lag
    }

    /// A notification lag (the change's arrival − when Apple's data in it was true), whole seconds.
    public struct Lag: Sendable, Equatable {
        public var count = 0
        public var p50Seconds: Int64?
        public var p95Seconds: Int64?
        public var maxSeconds: Int64?

        /// The lag of the changes whose seconds `histogram` counts (value → how many).
        init(_ histogram: [Int64: Int]) {
            count = histogram.values.reduce(0, +)
            p50Seconds = EpisodeSummary.quantile(histogram, 0.5)
            p95Seconds = EpisodeSummary.quantile(histogram, 0.95)
            maxSeconds = histogram.keys.max()
        }
    }

    /// Episodes by how they closed (open ones under "open").
    public var episodeCounts: [String: Int] { episodes.counts }

    /// The median whole days from day 0 to recovery, over recovered episodes; nil without any.
    public var medianDaysToRecover: Int? { episodes.medianDaysToRecover }

    /// Who may bring a change, in the order the page draws them.
    public static let sourceNames = ["poll", "notification", "backfill", "extended", "unknown"]

    /// The headline days of the recovery curve.
    public static let headlineDays = [3, 7, 16, 28, 60]
}
