/// The cumulative share of billing-issue episodes recovered, lost, cancelled (and refunded) by each
/// day since day 0, with open episodes censored: the Aalen–Johansen estimator of cumulative
/// incidence under competing outcomes. An episode still open after 5 days counts in the
/// denominators of days 0–5 only, instead of dragging "recovered ÷ entered" down; one first seen on
/// day 20 (a row first verified in billing retry) counts from day 20 on (delayed entry, as for left
/// truncation), so what happened before anyone looked does not count as survival.
public struct RecoveryCurve: Sendable, Equatable {
    /// One day's cumulative shares, 0…1.
    public struct Point: Sendable, Equatable {
        public var day: Int
        public var recovered: Double
        public var lost: Double
        public var cancelled: Double
        public var refunded: Double
        /// Episodes still open at the start of this day (the estimator's risk set).
        public var atRisk: Int
    }

    public var points: [Point]

    /// The curve over days 0…``EpisodeSummary/curveDays`` from the episodes' counts by day.
    public init(_ episodes: EpisodeSummary) {
        var atRisk = 0
        var survival = 1.0
        var cumulative: [BillingEpisode.Outcome: Double] = [:]
        var points: [Point] = []
        for day in 0...EpisodeSummary.curveDays {
            atRisk += episodes.enteredOnDay[day]
            let closed = episodes.closedOnDay[day]
            if atRisk > 0 {
                for (outcome, count) in closed { cumulative[outcome, default: 0] += survival * Double(count) / Double(atRisk) }
                survival *= 1 - Double(closed.values.reduce(0, +)) / Double(atRisk)
            }
            points.append(Point(
                day: day, recovered: cumulative[.recovered] ?? 0, lost: cumulative[.lost] ?? 0, cancelled: cumulative[.cancelled] ?? 0,
                refunded: cumulative[.refunded] ?? 0, atRisk: atRisk))
            atRisk -= episodes.leftAfterDay[day]
        }
        self.points = points
    }

    /// The share recovered by `day` (the last day's when beyond the curve).
    public func recovered(by day: Int) -> Double { points.isEmpty ? 0 : points[min(day, points.count - 1)].recovered }
}
