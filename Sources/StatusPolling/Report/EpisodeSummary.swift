/// The billing-issue episodes of a report, counted as each one closes (or, open, at the end): what
/// the JSON, the page and the recovery curve need, in counts by day and by second instead of a list,
/// so the report's memory does not grow with the trail.
public struct EpisodeSummary: Sendable, Equatable {
    /// The recovery curve's last day.
    public static let curveDays = 60

    public private(set) var total = 0
    /// By outcome, and `open`.
    public private(set) var counts: [String: Int] = Dictionary(
        uniqueKeysWithValues: (BillingEpisode.Outcome.allCases.map(\.rawValue) + ["open"]).map { ($0, 0) })
    public private(set) var recoveredInGrace = 0
    /// Episodes that closed on day d (0…curveDays) since their day 0, by outcome.
    private(set) var closedOnDay = Array(repeating: [BillingEpisode.Outcome: Int](), count: curveDays + 1)
    /// Episodes that joined the risk set on day d: the day the trail first showed them (an episode
    /// first seen on day 20, as a row first verified in billing retry is, was at risk only from
    /// then: left truncation). The last slot holds those first seen after the curve's last day.
    private(set) var enteredOnDay = Array(repeating: 0, count: curveDays + 2)
    /// Episodes that left the risk set after day d (closed, or censored while open); the last slot
    /// holds those still at risk after the curve's last day.
    private(set) var leftAfterDay = Array(repeating: 0, count: curveDays + 2)
    private var daysToRecover: [Int64: Int] = [:]
    /// Seen at − day 0, whole seconds.
    private var detectionLagSeconds: [Int64: Int] = [:]
    /// Grace period end − day 0, whole seconds, of the episodes that had one.
    private var graceSeconds: [Int64: Int] = [:]

    public init() {}

    /// Counts `episode`; one still open is censored at `endMs`.
    public mutating func add(_ episode: BillingEpisode, endMs: Int64) {
        total += 1
        counts[episode.outcome?.rawValue ?? "open", default: 0] += 1
        if episode.recoveredInGrace { recoveredInGrace += 1 }
        let day = episode.days(endMs: endMs)
        enteredOnDay[min(episode.daysUntilSeen, Self.curveDays + 1)] += 1
        if let outcome = episode.outcome, day <= Self.curveDays { closedOnDay[day][outcome, default: 0] += 1 }
        leftAfterDay[min(day, Self.curveDays + 1)] += 1
        if episode.outcome == .recovered { daysToRecover[Int64(day), default: 0] += 1 }
        detectionLagSeconds[(episode.seenAtMs - episode.startMs) / 1000, default: 0] += 1
        if let grace = episode.graceEndsMs { graceSeconds[(grace - episode.startMs) / 1000, default: 0] += 1 }
    }

    /// The median whole days from day 0 to recovery, over recovered episodes; nil without any.
    public var medianDaysToRecover: Int? { Self.quantile(daysToRecover, 0.5).map(Int.init) }

    /// The median days from day 0 until the trail showed the episode (to the second).
    public var medianDetectionLagDays: Double? { Self.quantile(detectionLagSeconds, 0.5).map { Double($0) / 86_400 } }

    /// The median grace period's end, in days since day 0 (to the second), of episodes that had one.
    public var medianGraceDays: Double? { Self.quantile(graceSeconds, 0.5).map { Double($0) / 86_400 } }

    /// The value at `share` (0…1) of the values a histogram counts (value → how many), sorted:
    /// the one at index ⌊(n − 1) × share⌋, so 0.5 is the lower median.
    static func quantile(_ histogram: [Int64: Int], _ share: Double) -> Int64? {
        let count = histogram.values.reduce(0, +)
        guard count > 0 else { return nil }
        let index = Int((Double(count - 1) * share).rounded(.down))
        var seen = 0
        for value in histogram.keys.sorted() {
            seen += histogram[value]!
            if seen > index { return value }
        }
        return nil
    }
}
