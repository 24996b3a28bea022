import EntitlementCore

/// Builds a ``TrailReport`` in one pass over the trail in `id` order. Per subscription it keeps one
/// small record (``TrailRowTable/Row``): its current columns and since when, its open billing
/// episode, and its last churn while a regain could still net it out. A row's columns before an
/// event are its columns after the one before (what the writers record as `old_values`), so the
/// trail's `old_values` are never read: half the JSON to parse. Everything else is counted as it happens, by
/// day, week or month, so memory follows the subscriptions and the days, never the trail's length.
public struct TrailReportBuilder {
    public let fromMs: Int64
    public let toMs: Int64
    public let environment: String?
    private var mix: StateMix
    private var rows = TrailRowTable()
    private var episodes = EpisodeSummary()
    /// Called with each episode of the report as it closes, then with those still open at the end
    /// (`episodes.csv`, a test's look at every episode); nil keeps none.
    private let onEpisode: ((BillingEpisode) -> Void)?
    private var churnByWeek: [Int64: [String: Int]] = [:]
    private var churnByMonth: [Int64: [String: Int]] = [:]
    /// Counts by week, in ``TrailReport/movementNames`` order.
    private var movement: [Int64: [Int]] = [:]
    private var refundsByDay: [Int64: Int] = [:]
    private var paidByWeek: [Int64: Int] = [:]
    private var paidByDay: [Int64: Int] = [:]
    /// Changes by week, in ``TrailReport/sourceNames`` order.
    private var sourcesByWeek: [Int64: [Int]] = [:]
    private var notificationLagByWeek: [Int64: [Int64: Int]] = [:]
    /// The latest instant the trail has seen (with the runs' clocks): an access that ends after it
    /// is not churn yet, since no one has looked since.
    private var seenThroughMs = Int64.min

    struct Churn {
        var atMs: Int64
        var intent: String?
        var nettedInWeek = false
        var nettedInMonth = false

        /// The churn a row's record still holds open to netting.
        init(_ pending: (atMs: Int64, intent: String?)) {
            atMs = pending.atMs
            intent = pending.intent
        }
    }

    typealias Row = TrailRowTable.Row

    static let dayMs = ReportCalendar.dayMs

    /// A report over [fromMs, toMs) (whole UTC days), of `environment` (nil: both).
    public init(fromMs: Int64, toMs: Int64, environment: String?, onEpisode: ((BillingEpisode) -> Void)? = nil) {
        let firstDay = ReportCalendar.startOfDay(fromMs)
        self.fromMs = firstDay
        self.toMs = max(toMs, firstDay + Self.dayMs)
        self.environment = environment
        self.onEpisode = onEpisode
        mix = StateMix(firstDayMs: firstDay, days: Int((self.toMs - firstDay + Self.dayMs - 1) / Self.dayMs))
    }

    public mutating func add(_ event: TrailEvent) {
        guard event.atMs < toMs else { return }
        if let environment, event.environment != environment { return }
        // A refused answer (older than the row's data, or another row's chain) changed nothing.
        if event.reason == "stale" || event.reason == "conflict" { return }
        let at = event.atMs
        seenThroughMs = max(seenThroughMs, at)
        let known = rows[event.subscriptionID]
        var row = known ?? Row(columns: .unverified, sinceMs: at)
        let old = row.columns
        if known != nil {
            close(&row, to: at)
            let before = row.columns.entitlement(at: at).isEntitled
            let after = event.new.entitlement(at: at).isEntitled
            if before, !after {
                churned(&row, at: at, intent: event.new.cancelledAt != nil ? "refunded" : event.new.expirationIntent.map(String.init))
            } else if !before, after {
                regained(&row, at: at, continuous: Self.wasContinuous(event, since: row.churn?.atMs))
            }
        }
        if row.churn?.intent == nil, row.churn != nil, let intent = event.new.expirationIntent, !event.new.entitlement(at: at).isEntitled {
            row.churn?.intent = String(intent)
        }
        row.columns = event.new
        row.sinceMs = at

        let wasOpen = row.episode != nil
        // The row's record leaves the id out (it is the table's key).
        var episode = row.episode.map { open in
            var open = open
            open.subscriptionID = event.subscriptionID
            return open
        }
        if let closed = EpisodeTracker.take(event, old: old, open: &episode) { count(closed) }
        row.episode = episode
        let entered = !wasOpen && row.episode != nil
        let refund = Self.refund(event, isFirst: known == nil, old: old)
        let isNewRefund = refund.map { row.isNewRefund(at: $0) } ?? false
        rows[event.subscriptionID] = row
        guard at >= fromMs else { return }
        let week = ReportCalendar.startOfWeek(at)
        switch event.reason {
        case "first_verified", "discovered": moved(.new, week); paid(at)
        case "renewed": moved(.renewed, week); paid(at)
        case "recovered": moved(.recovered, week)
        case "upgraded": moved(.upgraded, week)
        case "expired": moved(.expired, week)
        case "refunded", AuditReason.refundedEarlierPeriod.rawValue: if isNewRefund { moved(.refunded, week) }
        default: break
        }
        if entered { moved(.enteredBillingTrouble, week) }
        if isNewRefund, let refund { refundsByDay[ReportCalendar.startOfDay(refund), default: 0] += 1 }
        let source = TrailReport.sourceNames.firstIndex(of: event.source ?? "unknown") ?? TrailReport.sourceNames.count - 1
        sourcesByWeek[week, default: Array(repeating: 0, count: TrailReport.sourceNames.count)][source] += 1
        if event.source == "notification", let notified = event.notifiedAtMs {
            notificationLagByWeek[week, default: [:]][max(0, at - notified) / 1000, default: 0] += 1
        }
    }

    /// The instant of the refund `event` records, if it records one: the row's `cancelled_at` set
    /// by it, or an earlier period's refund by its own date (no access taken).
    static func refund(_ event: TrailEvent, isFirst: Bool, old: TrailState) -> Int64? {
        if event.reason == AuditReason.refundedEarlierPeriod.rawValue { return event.revokedAtMs }
        guard let refunded = event.new.cancelledAt, isFirst ? refundedAt(event) : old.cancelledAt == nil else { return nil }
        return refunded
    }

    /// Whether the first event the trail has of a row is its refund. The writers name a change
    /// `refunded` exactly when it sets `cancelled_at` (a first verification that finds a refund is
    /// `first_verified`, a row found in a receipt `discovered`): the report needs no `old_values`.
    static func refundedAt(_ event: TrailEvent) -> Bool {
        ["refunded", "first_verified", "discovered"].contains(event.reason)
    }

    enum Movement: Int, CaseIterable { case new, renewed, recovered, upgraded, enteredBillingTrouble, expired, refunded }

    private mutating func moved(_ kind: Movement, _ week: Int64) {
        movement[week, default: Array(repeating: 0, count: Movement.allCases.count)][kind.rawValue] += 1
    }

    private mutating func paid(_ ms: Int64) {
        paidByWeek[ReportCalendar.startOfWeek(ms), default: 0] += 1
        paidByDay[ReportCalendar.startOfDay(ms), default: 0] += 1
    }

    /// An episode of the report (first seen inside it, wherever its day 0 lies: the rows first
    /// verified while already in billing retry are the likeliest to be lost) is counted once it
    /// closes, or at the end.
    private mutating func count(_ episode: BillingEpisode) {
        guard episode.seenAtMs >= fromMs, episode.seenAtMs < toMs else { return }
        episodes.add(episode, endMs: toMs)
        onEpisode?(episode)
    }

    /// The stretch of `row`'s columns up to `endMs`: its days in the state mix, and a churn when its
    /// access ends inside it.
    private mutating func close(_ row: inout Row, to endMs: Int64) {
        let columns = row.columns, startMs = row.sinceMs
        mix.add(columns, from: startMs, to: endMs)
        guard columns.entitlement(at: startMs).isEntitled else { return }
        let end = max(columns.expiresAt ?? .min, columns.gracePeriodExpiresAt ?? .min)
        // Up to and including `endMs`: Apple's EXPIRED notification is signed at the expiry itself,
        // and the event it brings finds the row already without access at its own instant.
        if end > startMs, end <= endMs { churned(&row, at: end, intent: columns.expirationIntent.map(String.init)) }
    }

    /// A new churn of `row`: the one before can no longer be netted out, and is counted.
    private mutating func churned(_ row: inout Row, at ms: Int64, intent: String?) {
        if let earlier = row.churn { counted(Churn(earlier)) }
        row.churn = (ms, intent)
    }

    /// Whether access back at `event` never really ended at `churnMs`: a renewal (into the same
    /// product or, `upgraded`, another of the group) seen after the expiry it followed — Apple
    /// charged before the expiry, and only the poll came after it — or a grace period that covers
    /// the churn's instant (Apple's grace period begins at the expiry).
    static func wasContinuous(_ event: TrailEvent, since churnMs: Int64?) -> Bool {
        if event.reason == "renewed" || event.reason == "upgraded" { return true }
        guard let churnMs, let grace = event.new.gracePeriodExpiresAt else { return false }
        return grace > churnMs
    }

    /// Access back (a recovery after expiry, a resubscription): a churn of the same week or month
    /// nets out; one that was no churn at all (``wasContinuous(_:since:)``) is dropped.
    private mutating func regained(_ row: inout Row, at ms: Int64, continuous: Bool) {
        guard let pending = row.churn else { return }
        var churn = Churn(pending)
        row.churn = nil
        if continuous { return }
        if ReportCalendar.startOfWeek(churn.atMs) == ReportCalendar.startOfWeek(ms) { churn.nettedInWeek = true }
        if ReportCalendar.startOfMonth(churn.atMs) == ReportCalendar.startOfMonth(ms) { churn.nettedInMonth = true }
        counted(churn)
    }

    /// A churn that is final: in its week's and month's counts unless netted there. One after the
    /// trail's last look is not counted (no one has seen it happen).
    private mutating func counted(_ churn: Churn) {
        guard churn.atMs >= fromMs, churn.atMs < toMs, churn.atMs <= seenThroughMs else { return }
        let intent = churn.intent ?? "unknown"
        if !churn.nettedInWeek { churnByWeek[ReportCalendar.startOfWeek(churn.atMs), default: [:]][intent, default: 0] += 1 }
        if !churn.nettedInMonth { churnByMonth[ReportCalendar.startOfMonth(churn.atMs), default: [:]][intent, default: 0] += 1 }
    }

    /// The report, with `runs` (the run history) and the open episodes censored at its end.
    public mutating func finish(runs: [RunRecord], generatedAtMs: Int64) -> TrailReport {
        seenThroughMs = max(seenThroughMs, runs.map(\.nowMs).filter { $0 < toMs }.max() ?? .min)
        // Through the end of the last day: its end (`toMs`) is the last instant the mix counts.
        let last = rows
        rows = TrailRowTable()
        last.forEach { subscriptionID, row in
            var row = row
            close(&row, to: toMs + 1)
            if let churn = row.churn { counted(Churn(churn)) }
            if var open = row.episode {
                open.subscriptionID = subscriptionID
                count(open)
            }
        }
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
        for (kind, byPeriod, start, next) in [
            ("week", churnByWeek, ReportCalendar.startOfWeek, { $0 + 7 * Self.dayMs }),
            ("month", churnByMonth, ReportCalendar.startOfMonth, ReportCalendar.startOfNextMonth),
        ] as [(String, [Int64: [String: Int]], (Int64) -> Int64, (Int64) -> Int64)] {
            var period = start(fromMs)
            while period < toMs {
                let byIntent = byPeriod[period] ?? [:]
                churn.append(TrailReport.ChurnPeriod(
                    kind: kind, startMs: period, activeAtStart: entitled(atStartOf: max(period, fromMs)), churned: byIntent.values.reduce(0, +), byIntent: byIntent))
                period = next(period)
            }
        }
        let weeks = stride(from: ReportCalendar.startOfWeek(fromMs), to: toMs, by: Int(7 * Self.dayMs)).map { $0 }
        let refundsByWeek = Dictionary(grouping: refundsByDay, by: { ReportCalendar.startOfWeek($0.key) }).mapValues { $0.map(\.value).reduce(0, +) }
        let names = TrailReport.movementNames
        return TrailReport(
            generatedAtMs: generatedAtMs, fromMs: fromMs, toMs: toMs, environment: environment,
            pollIntervalHours: Self.pollInterval(runs), episodes: episodes, curve: RecoveryCurve(episodes), stateMix: stateMix, churn: churn,
            movement: weeks.map { week in
                let counts = movement[week] ?? []
                return TrailReport.MovementWeek(
                    startMs: week, counts: Dictionary(uniqueKeysWithValues: zip(names, counts).filter { $0.1 > 0 }.map { ($0.0, $0.1) }))
            },
            refunds: stride(from: fromMs, to: toMs, by: Int(Self.dayMs)).map {
                TrailReport.RefundDay(dateMs: $0, refunds: refundsByDay[$0] ?? 0, renewals: paidByDay[$0] ?? 0)
            },
            refundRates: weeks.map { TrailReport.RefundRate(startMs: $0, refunds: refundsByWeek[$0] ?? 0, paid: paidByWeek[$0] ?? 0) },
            runs: runs.filter { $0.nowMs >= fromMs && $0.nowMs < toMs }.sorted { $0.id < $1.id },
            sources: weeks.map { week in
                let counts = sourcesByWeek[week] ?? Array(repeating: 0, count: TrailReport.sourceNames.count)
                return TrailReport.SourceWeek(
                    startMs: week, counts: Dictionary(uniqueKeysWithValues: zip(TrailReport.sourceNames, counts).map { ($0.0, $0.1) }),
                    notificationLag: TrailReport.Lag(notificationLagByWeek[week] ?? [:]))
            },
            notificationLag: TrailReport.Lag(notificationLagByWeek.values.reduce(into: [:]) { all, week in all.merge(week, uniquingKeysWith: +) }))
    }

    /// The median gap between consecutive nightly runs' clocks, in hours.
    static func pollInterval(_ runs: [RunRecord]) -> Double? {
        let clocks = Set(runs.filter { $0.mode == .nightly }.map(\.nowMs)).sorted()
        let gaps = zip(clocks, clocks.dropFirst()).map { Double($1 - $0) / 3_600_000 }.sorted()
        return gaps.isEmpty ? nil : gaps[(gaps.count - 1) / 2]
    }
}
