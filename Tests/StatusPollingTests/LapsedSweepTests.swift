import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The lapsed sweep as a pure rule: which lapsed rows tonight asks about, that every lapsed row
/// has exactly one turn per period whatever night the job starts on, and which rows a later
/// night still reaches.
@Suite struct LapsedSweepTests {
    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000
    /// 2027-01-15T08:00:00Z: a night at 08:00 UTC, day 20833 since 1970.
    static let now: Int64 = 1_800_000_000_000
    static let todayStart: Int64 = 20833 * day

    static func lapsed(_ ago: Int64, _ change: (inout SubscriptionState) -> Void = { _ in }) -> SubscriptionState {
        var state = SubscriptionState(
            originalTransactionID: "1000000001", productID: "premium.monthly", environment: "Production",
            expiresAt: now - ago, autoRenewStatus: false, autoRenewProductID: "premium.monthly", expirationIntent: 1)
        change(&state)
        return state
    }

    /// The cases, with the default sweep (every 7 days, within 180): `tonight` is whether
    /// tonight's run selects the row, `sweep` whether only as a lapsed turn (`selected_lapsed`).
    @Test(arguments: [
        ("lapsed 47 h: near expiry, not the sweep", Self.lapsed(47 * Self.hour), true, false),
        ("lapsed 49 h: no window, no turn", Self.lapsed(49 * Self.hour), false, false),
        ("lapsed 6 d (its UTC day is 6 days back)", Self.lapsed(6 * Self.day), false, false),
        ("lapsed 7 d (7 days back: its turn)", Self.lapsed(7 * Self.day), true, true),
        ("lapsed 7 d, but at 23:00 of the day before: 8 days back", Self.lapsed(Self.now - (Self.todayStart - 8 * Self.day + 23 * Self.hour)), false, false),
        ("lapsed 14 d: its second turn", Self.lapsed(14 * Self.day), true, true),
        ("lapsed 175 d: its last turn", Self.lapsed(175 * Self.day), true, true),
        ("lapsed 179 d: not its turn", Self.lapsed(179 * Self.day), false, false),
        ("lapsed 182 d: its turn's day, past the sweep", Self.lapsed(182 * Self.day), false, false),
        ("refunded, period ended 7 d ago", Self.lapsed(7 * Self.day) { $0.cancelledAt = now - 20 * day }, true, true),
        ("refunded, period not over", Self.lapsed(-20 * Self.day) { $0.cancelledAt = now - 7 * day }, false, false),
        ("in billing retry 7 d: retry's window", Self.lapsed(7 * Self.day) { $0.isInBillingRetry = true; $0.expirationIntent = nil }, true, false),
        ("in billing retry 70 d: not swept", Self.lapsed(70 * Self.day) { $0.isInBillingRetry = true; $0.expirationIntent = nil }, false, false),
    ])
    func tonight(name: String, state: SubscriptionState, tonight: Bool, sweep: Bool) {
        let bounds = SelectionWindows().bounds(nowMs: Self.now)
        #expect(bounds.selects(state) == tonight, "\(name)")
        #expect(bounds.selectsOnlyAsLapsed(state) == sweep, "\(name)")
    }

    @Test func anUploadedRowIsTheUploadsNotTheSweeps() {
        let bounds = SelectionWindows().bounds(nowMs: Self.now)
        #expect(bounds.selects(Self.lapsed(7 * Self.day), receiptUploaded: true))
        #expect(!bounds.selectsOnlyAsLapsed(Self.lapsed(7 * Self.day), receiptUploaded: true))
    }

    /// 179 and 181 days, with a sweep every night: the limit is `within`, not the period.
    @Test(arguments: [(179, true), (180, true), (181, false)])
    func theSweepReachesBackWithinDays(days: Int64, due: Bool) {
        let nightly = SelectionWindows(lapsed: LapsedSweep(every: .seconds(86400))).bounds(nowMs: Self.now)
        // At 08:00 the row that lapsed exactly 180 days ago is at 08:00 of its day: still within.
        #expect(nightly.selects(Self.lapsed(days * Self.day)) == due)
    }

    /// Rows that lapsed on each of 70 consecutive days: over any 7 consecutive nights, whatever
    /// the first, each is asked exactly once, and each night asks a seventh of them.
    @Test(arguments: [0, 1, 3, 6])
    func everyLapsedRowHasOneTurnPerPeriod(startOffset: Int64) {
        let firstNight = Self.now + startOffset * Self.day
        let rows = (8...77).map { daysBefore in Self.lapsed(startOffset * -Self.day + daysBefore * Self.day + 5 * Self.hour) }
        var turns = Array(repeating: 0, count: rows.count)
        for night in 0..<7 {
            let bounds = SelectionWindows().bounds(nowMs: firstNight + Int64(night) * Self.day)
            let asked = rows.indices.filter { bounds.selectsOnlyAsLapsed(rows[$0]) }
            #expect(asked.count == 10, "night \(night)")
            for index in asked { turns[index] += 1 }
        }
        #expect(turns == Array(repeating: 1, count: rows.count))
    }

    /// The store's query takes tonight's turns as `expires_at` ranges: one UTC day every period
    /// back, down to `within`; a daily sweep is one range.
    @Test func tonightsTurnsAreExpiryRanges() {
        let night = LapsedSweep().night(nowMs: Self.now)
        let ranges = night.expiryRanges
        #expect(ranges.count == 25)
        #expect(ranges.first == (Self.todayStart - 7 * Self.day)...(Self.todayStart - 6 * Self.day - 1))
        #expect(ranges.last == (Self.todayStart - 175 * Self.day)...(Self.todayStart - 174 * Self.day - 1))
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.lowerBound - $1.lowerBound == 7 * Self.day })
        // The oldest turn is cut at `within`: 182 days back starts before it.
        let edge = LapsedSweep(within: .seconds(182 * 86400)).night(nowMs: Self.now).expiryRanges
        #expect(edge.last == (Self.now - 182 * Self.day)...(Self.todayStart - 181 * Self.day - 1))
        let daily = LapsedSweep(every: .seconds(86400)).night(nowMs: Self.now).expiryRanges
        #expect(daily == [(Self.now - 180 * Self.day)...(Self.todayStart - 1)])
        // The row rule and the ranges agree at every edge: in at both ends, out a ms beyond.
        let edgeNight = LapsedSweep(within: .seconds(182 * 86400)).night(nowMs: Self.now)
        for (sweep, turns) in [(night, ranges), (edgeNight, edge)] {
            for range in turns {
                #expect(sweep.isTurn(expiresAt: range.lowerBound) && sweep.isTurn(expiresAt: range.upperBound))
                #expect(!sweep.isTurn(expiresAt: range.lowerBound - 1) && !sweep.isTurn(expiresAt: range.upperBound + 1))
            }
        }
    }

    /// A row stays watched while some turn is left within the sweep: lapsed 174 days ago, its
    /// next turn is at 175; lapsed 178 days ago, the next (182) is past it.
    @Test(arguments: [(174, true), (175, true), (176, false), (178, false), (10, true), (0, true)])
    func aLaterTurnWithinTheSweep(days: Int64, watched: Bool) {
        let bounds = SelectionWindows().bounds(nowMs: Self.now)
        #expect(bounds.selectsNowOrLater(Self.lapsed(days * Self.day)) == watched, "lapsed \(days) days ago")
    }

    @Test func offMeansNoSweep() {
        var windows = SelectionWindows()
        windows.lapsed = nil
        let bounds = windows.bounds(nowMs: Self.now)
        #expect(!bounds.selects(Self.lapsed(7 * Self.day)))
        #expect(!bounds.selectsNowOrLater(Self.lapsed(7 * Self.day)))
        #expect(!bounds.selectsOnlyAsLapsed(Self.lapsed(7 * Self.day)))
    }
}
