/// The report's refund requests (`consumption_requests`): how many came each week, the share
/// answered, and Apple's decisions by the preference sent — read beside the trail, not from it.
public struct RefundRequestReport: Sendable, Equatable {
    /// One week (Monday, UTC) of requests, by their `signedDate`.
    public struct Week: Sendable, Equatable {
        public var startMs: Int64
        public var requests = 0
        /// Apple took the answer (202).
        public var answered = 0
        public var noConsent = 0
        public var expired = 0
        /// Apple's later decision on the week's requests.
        public var refunded = 0
        public var declined = 0
    }

    /// Apple's decisions on the requests answered with one preference ("none": answered without
    /// one; "unanswered": nothing Apple took).
    public struct Outcome: Sendable, Equatable {
        public var preference: String
        public var requests = 0
        public var refunded = 0
        public var declined = 0
        /// No decision seen yet.
        public var undecided: Int { requests - refunded - declined }
    }

    public var weeks: [Week] = []
    public var byPreference: [Outcome] = []

    public init() {}

    /// `records` whose request falls in [`fromMs`, `toMs`).
    public init(_ records: [ConsumptionRequestRecord], fromMs: Int64, toMs: Int64) {
        var weeks: [Int64: Week] = [:]
        var outcomes: [String: Outcome] = [:]
        for r in records where r.requestedAtMs >= fromMs && r.requestedAtMs < toMs {
            let start = ReportCalendar.startOfWeek(r.requestedAtMs)
            var week = weeks[start] ?? Week(startMs: start)
            week.requests += 1
            if r.state == .sent { week.answered += 1 }
            if r.state == .noConsent { week.noConsent += 1 }
            if r.state == .expired { week.expired += 1 }
            if r.decision == "refunded" { week.refunded += 1 }
            if r.decision == "declined" { week.declined += 1 }
            weeks[start] = week
            let key = r.state == .sent ? (r.refundPreference?.rawValue ?? "none") : "unanswered"
            var outcome = outcomes[key] ?? Outcome(preference: key)
            outcome.requests += 1
            if r.decision == "refunded" { outcome.refunded += 1 }
            if r.decision == "declined" { outcome.declined += 1 }
            outcomes[key] = outcome
        }
        self.weeks = weeks.values.sorted { $0.startMs < $1.startMs }
        byPreference = outcomes.values.sorted { $0.preference < $1.preference }
    }

    /// Answered ÷ requests; nil without a request.
    public var answeredShare: Double? {
        let requests = weeks.map(\.requests).reduce(0, +)
        return requests > 0 ? Double(weeks.map(\.answered).reduce(0, +)) / Double(requests) : nil
    }
}
