import Foundation

/// Builds a ``TrailReport`` in one pass over the trail in `id` order: per subscription it keeps
/// only its current columns and since when it held them (the state mix and churn are reckoned
/// stretch by stretch), plus its open billing episode.
public struct TrailReportBuilder {
    public let fromMs: Int64
    public let toMs: Int64
    public let environment: String?
    private var mix: StateMix
    private var tracker = EpisodeTracker()
    private var closed: [BillingEpisode] = []
    private var current: [Int64: (columns: SubscriptionState, sinceMs: Int64)] = [:]
    private var churns: [Churn] = []
    /// Each subscription's churns not yet netted out, by index into ``churns``.
    private var lastChurn: [Int64: Int] = [:]
    private var movement: [Int64: [String: Int]] = [:]
    private var refundsByDay: [Int64: Int] = [:]
    private var paidByWeek: [Int64: Int] = [:]
    private var paidByDay: [Int64: Int] = [:]
    /// The latest instant the trail has seen (with the runs' clocks): an access that ends after it
    /// is not churn yet, since no one has looked since.
    private var seenThroughMs = Int64.min

    struct Churn {
        var atMs: Int64
        var intent: String?
        var nettedInWeek = false
        var nettedInMonth = false
    }

    static let dayMs = StateMix.dayMs

    /// A report over [fromMs, toMs) (whole UTC days), of `environment` (nil: both).
    public init(fromMs: Int64, toMs: Int64, environment: String?) {
        let firstDay = Self.startOfDay(fromMs)
        self.fromMs = firstDay
        self.toMs = max(toMs, firstDay + Self.dayMs)
        self.environment = environment
        mix = StateMix(firstDayMs: firstDay, days: Int((self.toMs - firstDay + Self.dayMs - 1) / Self.dayMs))
    }

    public mutating func add(_ event: TrailEvent) {
        guard event.atMs < toMs else { return }
        if let environment, event.environment != environment { return }
        let at = event.atMs
        let inRange = at >= fromMs
        seenThroughMs = max(seenThroughMs, at)
        if let previous = current[event.subscriptionID] {
            close(event.subscriptionID, previous.columns, from: previous.sinceMs, to: at)
            let before = previous.columns.entitlement(at: at).isEntitled
            let after = event.new.entitlement(at: at).isEntitled
            if before, !after {
                churned(event.subscriptionID, at: at, intent: event.new.cancelledAt != nil ? "refunded" : event.new.expirationIntent.map(String.init))
            } else if !before, after {
                regained(event.subscriptionID, at: at, renewal: event.reason == "renewed")
            }
        }
        if let index = lastChurn[event.subscriptionID], churns[index].intent == nil, let intent = event.new.expirationIntent,
            !event.new.entitlement(at: at).isEntitled
        {
            churns[index].intent = String(intent)
        }
        current[event.subscriptionID] = (event.new, at)

        let wasOpen = tracker.isOpen(event.subscriptionID)
        if let episode = tracker.take(event) { closed.append(episode) }
        guard inRange else { return }
        let week = Self.startOfWeek(at)
        func count(_ name: String) { movement[week, default: [:]][name, default: 0] += 1 }
        switch event.reason {
        case "first_verified", "discovered": count("new"); paid(at)
        case "renewed": count("renewed"); paid(at)
        case "recovered": count("recovered")
        case "upgraded": count("upgraded")
        case "expired": count("expired")
        case "refunded": count("refunded")
        default: break
        }
        if !wasOpen, tracker.isOpen(event.subscriptionID) { count("entered_billing_trouble") }
        func paid(_ ms: Int64) {
            paidByWeek[Self.startOfWeek(ms), default: 0] += 1
            paidByDay[Self.startOfDay(ms), default: 0] += 1
        }
        if let refunded = event.new.cancelledAt, event.old.cancelledAt == nil {
            refundsByDay[Self.startOfDay(refunded), default: 0] += 1
        }
    }

    /// The stretch [startMs, endMs) of `columns`: its days in the state mix, and a churn when its
    /// access ends inside it.
    private mutating func close(_ subscriptionID: Int64, _ columns: SubscriptionState, from startMs: Int64, to endMs: Int64) {
        mix.add(columns, from: startMs, to: endMs)
        guard columns.entitlement(at: startMs).isEntitled else { return }
        let end = max(columns.expiresAt ?? .min, columns.gracePeriodExpiresAt ?? .min)
        if end > startMs, end < endMs { churned(subscriptionID, at: end, intent: columns.expirationIntent.map(String.init)) }
    }

    private mutating func churned(_ subscriptionID: Int64, at ms: Int64, intent: String?) {
        lastChurn[subscriptionID] = churns.count
        churns.append(Churn(atMs: ms, intent: intent))
    }

    /// Access back (a recovery after expiry, a resubscription): a churn of the same week or month
    /// nets out. A plain renewal seen after the expiry it followed was no churn at all: Apple charged
    /// before the expiry, and only the poll came after it.
    private mutating func regained(_ subscriptionID: Int64, at ms: Int64, renewal: Bool) {
        guard let index = lastChurn[subscriptionID] else { return }
        if renewal {
            churns[index].nettedInWeek = true
            churns[index].nettedInMonth = true
            lastChurn[subscriptionID] = nil
            return
        }
        if Self.startOfWeek(churns[index].atMs) == Self.startOfWeek(ms) { churns[index].nettedInWeek = true }
        if Self.startOfMonth(churns[index].atMs) == Self.startOfMonth(ms) { churns[index].nettedInMonth = true }
        lastChurn[subscriptionID] = nil
    }

    /// The report, with `runs` (the run history) and the open episodes censored at its end.
    public mutating func finish(runs: [RunRecord], generatedAtMs: Int64) -> TrailReport {
        seenThroughMs = max(seenThroughMs, runs.map(\.nowMs).filter { $0 < toMs }.max() ?? .min)
        // Through the end of the last day: its end (`toMs`) is the last instant the mix counts.
        for (subscriptionID, last) in current.sorted(by: { $0.key < $1.key }) { close(subscriptionID, last.columns, from: last.sinceMs, to: toMs + 1) }
        let episodes = (closed + tracker.stillOpen).filter { $0.startMs >= fromMs && $0.startMs < toMs }
            .map { episode -> BillingEpisode in
                var episode = episode
                if let closedAt = episode.closedAtMs, closedAt >= toMs { episode.outcome = nil; episode.closedAtMs = nil }
                return episode
            }
            .sorted { ($0.startMs, $0.subscriptionID) < ($1.startMs, $1.subscriptionID) }
        let counts = mix.counts()
        let stateMix = counts.enumerated().map { day, byState in
            TrailReport.StateMixDay(dateMs: fromMs + Int64(day) * Self.dayMs, counts: Dictionary(uniqueKeysWithValues: byState.map { ($0.key.rawValue, $0.value) }))
        }
        func entitled(atStartOf ms: Int64) -> Int {
            let day = Int((ms - fromMs) / Self.dayMs) - 1
            let row = counts[max(0, min(day, counts.count - 1))]
            return row.filter(\.key.isEntitled).values.reduce(0, +)
        }
        var churn: [TrailReport.ChurnPeriod] = []
        for (kind, start, netted) in [("week", Self.startOfWeek, \Churn.nettedInWeek), ("month", Self.startOfMonth, \Churn.nettedInMonth)] as [(String, (Int64) -> Int64, KeyPath<Churn, Bool>)] {
            var byPeriod: [Int64: [String: Int]] = [:]
            for item in churns where item.atMs >= fromMs && item.atMs < toMs && item.atMs <= seenThroughMs && !item[keyPath: netted] {
                byPeriod[start(item.atMs), default: [:]][item.intent ?? "unknown", default: 0] += 1
            }
            var period = start(fromMs)
            while period < toMs {
                let byIntent = byPeriod[period] ?? [:]
                churn.append(TrailReport.ChurnPeriod(
                    kind: kind, startMs: period, activeAtStart: entitled(atStartOf: max(period, fromMs)), churned: byIntent.values.reduce(0, +), byIntent: byIntent))
                period = kind == "week" ? period + 7 * Self.dayMs : Self.startOfMonth(period + 32 * Self.dayMs)
            }
        }
        let weeks = stride(from: Self.startOfWeek(fromMs), to: toMs, by: Int(7 * Self.dayMs)).map { $0 }
        let refundsByWeek = Dictionary(grouping: refundsByDay, by: { Self.startOfWeek($0.key) }).mapValues { $0.map(\.value).reduce(0, +) }
        return TrailReport(
            generatedAtMs: generatedAtMs, fromMs: fromMs, toMs: toMs, environment: environment,
            pollIntervalHours: Self.pollInterval(runs), episodes: episodes, curve: RecoveryCurve(episodes, endMs: toMs), stateMix: stateMix, churn: churn,
            movement: weeks.map { TrailReport.MovementWeek(startMs: $0, counts: movement[$0] ?? [:]) },
            refunds: stride(from: fromMs, to: toMs, by: Int(Self.dayMs)).map {
                TrailReport.RefundDay(dateMs: $0, refunds: refundsByDay[$0] ?? 0, renewals: paidByDay[$0] ?? 0)
            },
            refundRates: weeks.map { TrailReport.RefundRate(startMs: $0, refunds: refundsByWeek[$0] ?? 0, paid: paidByWeek[$0] ?? 0) },
            runs: runs.filter { $0.nowMs >= fromMs && $0.nowMs < toMs }.sorted { $0.id < $1.id })
    }

    /// The median gap between consecutive nightly runs' clocks, in hours.
    static func pollInterval(_ runs: [RunRecord]) -> Double? {
        let clocks = Set(runs.filter { $0.mode == .nightly }.map(\.nowMs)).sorted()
        let gaps = zip(clocks, clocks.dropFirst()).map { Double($1 - $0) / 3_600_000 }.sorted()
        return gaps.isEmpty ? nil : gaps[(gaps.count - 1) / 2]
    }

    static func startOfDay(_ ms: Int64) -> Int64 { ms - ((ms % dayMs) + dayMs) % dayMs }

    /// Monday 00:00 UTC of `ms`'s week (1970-01-05 was a Monday).
    static func startOfWeek(_ ms: Int64) -> Int64 {
        let day = startOfDay(ms) / dayMs
        return (day - (((day - 4) % 7) + 7) % 7) * dayMs
    }

    static func startOfMonth(_ ms: Int64) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        let start = calendar.date(from: calendar.dateComponents([.year, .month], from: date)) ?? date
        return Int64(start.timeIntervalSince1970 * 1000)
    }
}
