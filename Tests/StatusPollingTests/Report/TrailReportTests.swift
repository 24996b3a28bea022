import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The report's numbers from a hand-built trail, every one worked out by hand: each way a billing
/// episode closes, one open at the end, a recovery inside and after grace, a refund during retry,
/// a sandbox row left out; the state mix, churn netting, movement and refunds.
@Suite struct TrailReportTests {
    static let day: Int64 = 86_400_000
    /// Monday 2026-01-05 00:00 UTC.
    static let t0: Int64 = 1_767_571_200_000

    static func columns(_ chain: Int, expires: Int64, retry: Bool = false, grace: Int64? = nil, intent: Int? = nil, autoRenew: Bool = true, cancelled: Int64? = nil, environment: String = "Production") -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: "\(1_000 + chain)", productID: "premium.monthly", environment: environment, expiresAt: expires,
            gracePeriodExpiresAt: grace, isInBillingRetry: retry, autoRenewStatus: autoRenew, autoRenewProductID: "premium.monthly",
            expirationIntent: intent, cancelledAt: cancelled)
    }

    /// The trail, in the order the writers appended it.
    static var trail: [TrailEvent] {
        let d = day, t = t0
        var events: [(Int64, Int64, String, SubscriptionState, SubscriptionState)] = []
        func verified(_ id: Int64, expires: Int64, environment: String = "Production") {
            events.append((id, t + 3_600_000, "first_verified", .unverified, columns(Int(id), expires: expires, environment: environment)))
        }
        // 1: recovered inside its grace period.
        verified(1, expires: t + 2 * d)
        // 2: lost when the retry ended. 3: cancelled during the retry. 4: refunded during grace.
        verified(2, expires: t + d)
        verified(3, expires: t + d)
        verified(4, expires: t + 3 * d)
        // 5: open at the report's end. 6: recovered after its grace period. 7: a sandbox row.
        verified(5, expires: t + 10 * d)
        verified(6, expires: t + d)
        verified(7, expires: t + d, environment: "Sandbox")
        events.append((2, t + 2 * d, "entered_billing_retry", columns(2, expires: t + d), columns(2, expires: t + d, retry: true, intent: 2)))
        events.append((3, t + 2 * d, "entered_billing_retry", columns(3, expires: t + d), columns(3, expires: t + d, retry: true, intent: 2)))
        events.append((6, t + 2 * d, "entered_grace", columns(6, expires: t + d), columns(6, expires: t + d, retry: true, grace: t + 4 * d, intent: 2)))
        events.append((7, t + 2 * d, "entered_billing_retry", columns(7, expires: t + d, environment: "Sandbox"), columns(7, expires: t + d, retry: true, intent: 2, environment: "Sandbox")))
        events.append((1, t + 3 * d, "entered_grace", columns(1, expires: t + 2 * d), columns(1, expires: t + 2 * d, retry: true, grace: t + 18 * d, intent: 2)))
        events.append((4, t + 4 * d, "entered_grace", columns(4, expires: t + 3 * d), columns(4, expires: t + 3 * d, retry: true, grace: t + 19 * d, intent: 2)))
        events.append((3, t + 5 * d, "auto_renew_off", columns(3, expires: t + d, retry: true, intent: 2), columns(3, expires: t + d, retry: true, intent: 2, autoRenew: false)))
        events.append((1, t + 6 * d, "recovered", columns(1, expires: t + 2 * d, retry: true, grace: t + 18 * d, intent: 2), columns(1, expires: t + 32 * d)))
        events.append((4, t + 8 * d, "refunded", columns(4, expires: t + 3 * d, retry: true, grace: t + 19 * d, intent: 2),
            columns(4, expires: t + 3 * d, retry: true, grace: t + 19 * d, intent: 2, autoRenew: false, cancelled: t + 7 * d)))
        events.append((6, t + 9 * d, "recovered", columns(6, expires: t + d, retry: true, grace: t + 4 * d, intent: 2), columns(6, expires: t + 39 * d)))
        events.append((5, t + 11 * d, "entered_billing_retry", columns(5, expires: t + 10 * d), columns(5, expires: t + 10 * d, retry: true, intent: 2)))
        events.append((2, t + 15 * d, "expired", columns(2, expires: t + d, retry: true, intent: 2), columns(2, expires: t + d, intent: 2)))
        // The writers' old_values (e.3) are the row's previous new values; the report keeps those itself.
        return events.enumerated().map { index, e in TrailEvent(id: Int64(index + 1), subscriptionID: e.0, atMs: e.1, reason: e.2, new: e.4) }
    }

    static func report(environment: String? = "Production", trail: [TrailEvent] = trail, onEpisode: ((BillingEpisode) -> Void)? = nil) -> TrailReport {
        var builder = TrailReportBuilder(fromMs: t0, toMs: t0 + 20 * day, environment: environment, onEpisode: onEpisode)
        for event in trail { builder.add(event) }
        return builder.finish(runs: [], generatedAtMs: t0 + 20 * day)
    }

    @Test func episodesCloseEachWayAndOneStaysOpen() {
        var episodes: [BillingEpisode] = []
        let report = Self.report(onEpisode: { episodes.append($0) })
        let byRow = Dictionary(uniqueKeysWithValues: episodes.map { ($0.subscriptionID, $0) })
        #expect(episodes.map(\.subscriptionID) == [3, 1, 4, 6, 2, 5])  // as they closed, then the open one
        #expect(report.episodes.total == 6)
        #expect(report.episodes.recoveredInGrace == 1)
        #expect(report.episodes.medianDetectionLagDays == 1)  // 1, 1, 1, 1, 1, 1 day late
        #expect(report.episodes.medianGraceDays == 16)  // 6: 3 d (day 0 t + d, grace t + 4d); 1 and 4: 16 d
        #expect(byRow[1]?.outcome == .recovered)
        #expect(byRow[1]?.days(endMs: report.toMs) == 4)
        #expect(byRow[1]?.recoveredInGrace == true)
        #expect(byRow[1]?.startMs == Self.t0 + 2 * Self.day)
        #expect(byRow[1]?.seenAtMs == Self.t0 + 3 * Self.day)  // detected a day late
        #expect(byRow[2]?.outcome == .lost)
        #expect(byRow[2]?.days(endMs: report.toMs) == 14)
        #expect(byRow[3]?.outcome == .cancelled)
        #expect(byRow[4]?.outcome == .refunded)
        #expect(byRow[5]?.outcome == nil)
        #expect(byRow[5]?.days(endMs: report.toMs) == 10)
        #expect(byRow[6]?.outcome == .recovered)
        #expect(byRow[6]?.recoveredInGrace == false)
        #expect(report.episodeCounts == ["recovered": 2, "lost": 1, "cancelled": 1, "refunded": 1, "open": 1])
        #expect(report.medianDaysToRecover == 4)
        // Both environments: the sandbox row's episode (open) joins.
        #expect(Self.report(environment: nil).episodeCounts["open"] == 2)
    }

    /// Aalen–Johansen by hand: six at risk through day 4 (a recovery and a cancellation that day),
    /// four on day 5 (a refund), three on day 8 (a recovery), the open one censored after day 10,
    /// the last lost on day 14.
    @Test func theRecoveryCurveCensorsOpenEpisodes() {
        let curve = Self.report().curve
        func near(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-12 }
        #expect(curve.points.count == 61)
        #expect(curve.points[3].recovered == 0)
        #expect(curve.points[4].atRisk == 6)
        #expect(near(curve.points[4].recovered, 1.0 / 6))  // 1 of 6
        #expect(near(curve.points[4].cancelled, 1.0 / 6))
        #expect(curve.points[5].atRisk == 4)
        #expect(near(curve.points[5].refunded, 1.0 / 6))  // S(4) = 4/6, × 1/4
        #expect(curve.points[8].atRisk == 3)
        #expect(near(curve.points[8].recovered, 2.0 / 6))  // + S(7) = 1/2, × 1/3
        #expect(curve.points[11].atRisk == 1)  // the open episode left after day 10
        #expect(near(curve.points[14].lost, 1.0 / 3))  // S(13) = 1/3, × 1/1
        #expect(near(curve.points[60].recovered + curve.points[60].lost + curve.points[60].cancelled + curve.points[60].refunded, 1))
        #expect(TrailReport.headlineDays.map { curve.recovered(by: $0) }.map { ($0 * 6).rounded() } == [0, 1, 2, 2, 2])
    }

    @Test func theStateMixIsWhatTheViewWouldHaveSaid() {
        let mix = Self.report().stateMix
        #expect(mix.count == 20)
        #expect(mix[0].dateMs == Self.t0)
        // End of day 0: 1, 4 and 5 active; 2, 3 and 6 past their expiry, their failure not yet seen.
        #expect(mix[0].counts.filter { $0.value > 0 } == ["active_renewing": 3, "expired": 3])
        // End of day 2: 1 and 6 in grace, 2 and 3 in retry, 4 just expired, 5 active.
        #expect(mix[2].counts.filter { $0.value > 0 } == ["active_renewing": 1, "grace_period": 2, "billing_retry": 2, "expired": 1])
        // End of day 8 (day 9, 00:00): 1 renewed, 5 active, 6 recovered at that very instant; 2 and
        // 3 (auto-renew off) in retry; 4 refunded.
        #expect(mix[8].counts.filter { $0.value > 0 } == ["active_renewing": 3, "billing_retry": 2, "refunded": 1])
    }

    @Test func churnNetsOutRecoveriesOfThePeriod() {
        let weeks = Self.report().churn.filter { $0.kind == "week" }
        #expect(weeks.map(\.startMs) == [Self.t0, Self.t0 + 7 * Self.day, Self.t0 + 14 * Self.day])
        #expect(weeks.map(\.churned) == [3, 2, 0])
        #expect(weeks[0].byIntent == ["2": 3])
        #expect(weeks[1].byIntent == ["2": 1, "refunded": 1])
        #expect(weeks[1].activeAtStart == 3)
        let months = Self.report().churn.filter { $0.kind == "month" }
        #expect(months.count == 1)
        #expect(months[0].churned == 4)  // 6's churn on day 4 nets out with its recovery on day 9
        #expect(months[0].byIntent == ["2": 3, "refunded": 1])
    }

    @Test func movementAndRefunds() {
        let report = Self.report()
        #expect(report.movement.map(\.counts) == [
            ["new": 6, "recovered": 1, "entered_billing_trouble": 5],
            ["recovered": 1, "refunded": 1, "entered_billing_trouble": 1],
            ["expired": 1],
        ])
        #expect(report.refunds.filter { $0.refunds > 0 } == [.init(dateMs: Self.t0 + 7 * Self.day, refunds: 1)])
        #expect(report.refunds.map(\.renewals).reduce(0, +) == 6)
        #expect(report.refunds[0].renewals == 6)
        #expect(report.refundRates.map(\.refunds) == [0, 1, 0])
        #expect(report.refundRates.map(\.paid) == [6, 0, 0])
    }

    /// An answer the writer refused (older than the row's data, or another row's chain) is in the
    /// trail with the refused columns as `new`: it changes nothing the report counts.
    @Test func refusedAnswersChangeNothing() {
        let d = Self.day, t = Self.t0
        var trail = Self.trail
        let last = trail.count
        trail.append(TrailEvent(id: Int64(last + 1), subscriptionID: 5, atMs: t + 12 * d, reason: "stale", new: Self.columns(5, expires: t + 40 * d)))
        trail.append(TrailEvent(id: Int64(last + 2), subscriptionID: 6, atMs: t + 12 * d, reason: "conflict", new: Self.columns(6, expires: t + 39 * d, cancelled: t + 12 * d)))
        let plain = Self.report(), refused = Self.report(trail: trail)
        #expect(refused.episodeCounts == plain.episodeCounts)
        #expect(refused.stateMix == plain.stateMix)
        #expect(refused.churn == plain.churn)
        #expect(refused.refunds == plain.refunds)
        #expect(refused.sources.map { $0.counts.values.reduce(0, +) } == plain.sources.map { $0.counts.values.reduce(0, +) })
    }

    /// Who brought each change, and how long a notification's news took to reach the row.
    @Test func changesBySourceAndTheNotificationLag() {
        let d = Self.day, t = Self.t0
        var trail = Self.trail
        // The first week's polls; 1's recovery (day 6) and 4's refund (day 8) came by notification,
        // 40 s and 2 h after Apple signed them; 5's retry (day 11) by a backfill.
        for index in trail.indices { trail[index].source = "poll" }
        let recovery = trail.firstIndex { $0.subscriptionID == 1 && $0.reason == "recovered" }!
        trail[recovery].source = "notification"
        trail[recovery].notifiedAtMs = trail[recovery].atMs - 40_000
        let refund = trail.firstIndex { $0.subscriptionID == 4 && $0.reason == "refunded" }!
        trail[refund].source = "notification"
        trail[refund].notifiedAtMs = trail[refund].atMs - 7_200_000
        let retry = trail.firstIndex { $0.subscriptionID == 5 && $0.reason == "entered_billing_retry" }!
        trail[retry].source = "backfill"
        trail[trail.firstIndex { $0.subscriptionID == 2 && $0.reason == "expired" }!].source = nil
        // 6's renewal date extended by support (`extend`) on day 10.
        let extendedAt = trail.lastIndex { $0.subscriptionID == 6 && $0.atMs <= t + 10 * d }!
        trail.insert(
            TrailEvent(id: trail.map(\.id).max()! + 1, subscriptionID: 6, atMs: t + 10 * d, reason: "extended", source: "extended", new: Self.columns(6, expires: t + 69 * d)),
            at: extendedAt + 1)
        let report = Self.report(trail: trail)
        #expect(report.sources.map(\.startMs) == [t, t + 7 * d, t + 14 * d])
        // Week 1: six verified, five entering trouble, 3's auto-renew off (polls), 1's recovery (notified);
        // week 2: 4's refund (notified), 6's recovery, 5's retry (backfill), 6's extension; week 3: 2's expiry (unrecorded).
        #expect(report.sources.map(\.counts) == [
            ["poll": 12, "notification": 1, "backfill": 0, "extended": 0, "unknown": 0],
            ["poll": 1, "notification": 1, "backfill": 1, "extended": 1, "unknown": 0],
            ["poll": 0, "notification": 0, "backfill": 0, "extended": 0, "unknown": 1],
        ])
        #expect(report.sources[0].notificationLag == TrailReport.Lag([40: 1]))
        #expect(report.sources[0].notificationLag.p95Seconds == 40)
        #expect(report.notificationLag.count == 2)
        #expect(report.notificationLag.p50Seconds == 40)
        #expect(report.notificationLag.p95Seconds == 40)  // ⌊(2 − 1) × 0.95⌋ = the first of two
        #expect(report.notificationLag.maxSeconds == 7_200)
        let json = try! JSONSerialization.jsonObject(with: Data(try! report.json().utf8)) as! [String: Any]
        #expect(json["notification_lag"] as? [String: Int] == ["count": 2, "p50_seconds": 40, "p95_seconds": 40, "max_seconds": 7_200])
        #expect((json["sources"] as? [[String: Any]])?[1]["notification"] as? Int == 1)
    }

    /// The report's calendar by arithmetic agrees with Foundation's Gregorian calendar, day by day
    /// over 1969–2101 (leap years, centuries, 2000).
    @Test func monthsAndWeeksByArithmeticAreTheCalendars() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var mismatches = 0
        for day in stride(from: Int64(-400), to: 48_000, by: 1) {
            let ms = day * Self.day + 3_600_000 * (day % 24)
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            let month = calendar.date(from: calendar.dateComponents([.year, .month], from: date))!
            if ReportCalendar.startOfMonth(ms) != Int64(month.timeIntervalSince1970 * 1000) { mismatches += 1 }
            if calendar.component(.weekday, from: Date(timeIntervalSince1970: Double(ReportCalendar.startOfWeek(ms)) / 1000)) != 2 { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(ReportCalendar.startOfNextMonth(1_767_225_600_000) == 1_769_904_000_000)  // 2026-01-01 → 2026-02-01
    }

    /// `episodes.csv`, written as the episodes close: a header and one line each.
    @Test func episodesCSVIsWrittenAsTheyClose() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sp-episodes-\(UUID().uuidString).csv").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let csv = try EpisodeCSV(path: path, endMs: Self.t0 + 20 * Self.day)
        _ = Self.report(onEpisode: csv.write)
        #expect(!FileManager.default.fileExists(atPath: path))  // under its name only when complete
        try csv.finish()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 7)
        #expect(lines[0] == "subscription_id,day_0,seen_at,grace_ends,outcome,closed_at,days,recovered_in_grace")
        #expect(lines[2] == "1,2026-01-07T00:00:00Z,2026-01-08T00:00:00Z,2026-01-23T00:00:00Z,recovered,2026-01-11T00:00:00Z,4,1")
        #expect(lines[6] == "5,2026-01-15T00:00:00Z,2026-01-16T00:00:00Z,,open,,10,0")  // censored at the report's end
    }

    /// The first event the trail has of a row (one the web service inserted already verified, or one
    /// older than the trail) counts a refund only when the writers named it one.
    @Test func aRowsFirstEventCountsARefundByItsReason() {
        let d = Self.day, t = Self.t0
        let refunded = Self.columns(8, expires: t + 30 * d, cancelled: t + 2 * d)
        let trail = [
            TrailEvent(id: 1, subscriptionID: 8, atMs: t + 3 * d, reason: "refunded", new: refunded),
            TrailEvent(id: 2, subscriptionID: 9, atMs: t + 3 * d, reason: "other_change", new: Self.columns(9, expires: t + 30 * d, cancelled: t + 2 * d)),
            TrailEvent(id: 3, subscriptionID: 10, atMs: t + 3 * d, reason: "first_verified", new: Self.columns(10, expires: t + 30 * d, cancelled: t + d)),
        ]
        let report = Self.report(trail: trail)
        #expect(report.refunds.filter { $0.refunds > 0 } == [
            .init(dateMs: t + d, refunds: 1, renewals: 0), .init(dateMs: t + 2 * d, refunds: 1, renewals: 0),
        ])
    }

    /// A refund the trail holds twice (a history poll, then the delayed notification of the same
    /// refund, written before the ledger kept them apart) is one refund: by its row and Apple's
    /// revocation instant. Another refund of the same row is another.
    @Test func aRefundRecordedTwiceIsCountedOnce() {
        let d = Self.day, t = Self.t0
        let eleven = Self.columns(11, expires: t + 30 * d), twelve = Self.columns(12, expires: t + 30 * d)
        func earlier(_ id: Int64, _ row: Int64, at: Int64, revoked: Int64, _ columns: SubscriptionState) -> TrailEvent {
            TrailEvent(
                id: id, subscriptionID: row, atMs: at, reason: "refunded_earlier_period", environment: "Production", new: TrailState(columns),
                revokedAtMs: revoked)
        }
        var refunded = twelve
        refunded.cancelledAt = t + 7 * d
        let trail = [
            TrailEvent(id: 1, subscriptionID: 11, atMs: t + 3_600_000, reason: "first_verified", new: eleven),
            TrailEvent(id: 2, subscriptionID: 12, atMs: t + 3_600_000, reason: "first_verified", new: twelve),
            earlier(3, 11, at: t + 4 * d, revoked: t + 3 * d, eleven),
            earlier(4, 11, at: t + 5 * d, revoked: t + 3 * d, eleven),
            earlier(5, 11, at: t + 6 * d, revoked: t + 6 * d, eleven),
            TrailEvent(id: 6, subscriptionID: 12, atMs: t + 8 * d, reason: "refunded", new: refunded),
            earlier(7, 12, at: t + 9 * d, revoked: t + 7 * d, refunded),
        ]
        let report = Self.report(trail: trail)
        #expect(report.refunds.filter { $0.refunds > 0 }.map { [$0.dateMs, Int64($0.refunds)] } == [[t + 3 * d, 1], [t + 6 * d, 1], [t + 7 * d, 1]])
        #expect(report.movement.map { $0.counts["refunded"] ?? 0 } == [2, 1, 0])
    }
}
