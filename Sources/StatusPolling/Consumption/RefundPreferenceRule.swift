import Foundation

/// One rule of the refund-preference policy (the config file's `consumption_refund_rules`): when
/// every condition it names holds over the facts we keep, its preference is sent. The first rule
/// that matches wins; none matching, no preference is sent (Apple decides).
public struct RefundPreferenceRule: Sendable, Equatable {
    public var prefer: RefundPreference
    /// At least this many days between the period's start and the request.
    public var minDaysSincePeriodStart: Double?
    /// Fewer than this many days between the period's start and the request.
    public var maxDaysSincePeriodStart: Double?
    /// At least this many refunds this customer had before.
    public var minPriorRefunds: Int?
    /// The period was used (true) or not (false): the web service's `last_used_at` falls in it or not.
    public var periodUsed: Bool?

    public init(prefer: RefundPreference, minDaysSincePeriodStart: Double? = nil, maxDaysSincePeriodStart: Double? = nil, minPriorRefunds: Int? = nil, periodUsed: Bool? = nil) {
        self.prefer = prefer
        self.minDaysSincePeriodStart = minDaysSincePeriodStart
        self.maxDaysSincePeriodStart = maxDaysSincePeriodStart
        self.minPriorRefunds = minPriorRefunds
        self.periodUsed = periodUsed
    }

    /// The rule's conditions over `request`; a condition on a fact we lack (no period start) does not hold.
    public func matches(_ request: ConsumptionRequestRecord) -> Bool {
        let days = request.periodStartedAtMs.map { Double(request.requestedAtMs - $0) / 86_400_000 }
        if let minDaysSincePeriodStart, (days ?? -.infinity) < minDaysSincePeriodStart { return false }
        if let maxDaysSincePeriodStart, (days ?? .infinity) >= maxDaysSincePeriodStart { return false }
        if let minPriorRefunds, request.priorRefunds < minPriorRefunds { return false }
        if let periodUsed, Self.used(request) != periodUsed { return false }
        return true
    }

    /// Used in the period: the web service saw the customer use the service since the period began.
    static func used(_ request: ConsumptionRequestRecord) -> Bool {
        guard let last = request.lastUsedAtMs, let start = request.periodStartedAtMs else { return false }
        return last >= start
    }

    /// Reads a rule from the config file's JSON object: `prefer` (Apple's value) and any of
    /// `min_days_since_period_start`, `max_days_since_period_start`, `min_prior_refunds`, `period_used`.
    public init(json: [String: Any]) throws(ConsumptionPolicyError) {
        let known: Set<String> = ["prefer", "min_days_since_period_start", "max_days_since_period_start", "min_prior_refunds", "period_used"]
        if let unknown = json.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConsumptionPolicyError("unknown key '\(unknown)' in a consumption_refund_rules entry; the keys are \(known.sorted().joined(separator: ", ")).")
        }
        guard let text = json["prefer"] as? String, let prefer = RefundPreference(rawValue: text) else {
            throw ConsumptionPolicyError("each consumption_refund_rules entry needs \"prefer\": one of \(RefundPreference.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        func number(_ key: String) throws(ConsumptionPolicyError) -> Double? {
            guard let value = json[key] else { return nil }
            guard let number = (value as? NSNumber)?.doubleValue, number >= 0 else { throw ConsumptionPolicyError("\(key) must be a number of at least 0.") }
            return number
        }
        var used: Bool?
        if let value = json["period_used"] {
            guard let flag = value as? Bool else { throw ConsumptionPolicyError("period_used must be true or false.") }
            used = flag
        }
        self.init(
            prefer: prefer, minDaysSincePeriodStart: try number("min_days_since_period_start"), maxDaysSincePeriodStart: try number("max_days_since_period_start"),
            minPriorRefunds: try number("min_prior_refunds").map { Int($0) }, periodUsed: used)
    }
}
