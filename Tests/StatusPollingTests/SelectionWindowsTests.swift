import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The nightly windows as a pure rule, at their boundaries: which rows tonight's run asks about,
/// and which rows some later night will still ask about if their columns stay as they are.
@Suite struct SelectionWindowsTests {
    static let now: Int64 = 1_800_000_000_000
    static let day: Int64 = 86_400_000
    static let bounds = SelectionWindows().bounds(nowMs: now)

    static func row(_ change: (inout SubscriptionState) -> Void) -> SubscriptionState {
        var state = SubscriptionState(
            originalTransactionID: "1000000001", productID: "premium.monthly", environment: "Production",
            expiresAt: now + 20 * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
        change(&state)
        return state
    }

    /// Billing retry: Apple retries for 60 days; the row stays due for a week beyond, then stops.
    @Test(arguments: [(59, true), (60, true), (61, true), (67, true), (68, false), (400, false)])
    func billingRetryPastExpiry(days: Int64, due: Bool) {
        let state = Self.row { $0.expiresAt = Self.now - days * Self.day; $0.isInBillingRetry = true; $0.expirationIntent = 2 }
        #expect(Self.bounds.selects(state) == due)
        #expect(Self.bounds.selectsNowOrLater(state) == due)
    }

    @Test func theWindowsAreNamedWithApplesFigure() {
        #expect(SelectionWindows.appleBillingRetryPeriod == .seconds(60 * 86400))
        #expect(SelectionWindows().billingRetryPastExpiry == .seconds(67 * 86400))
    }

    /// Tonight's selection, and whether a later night reaches the row: an active row far from
    /// expiry is not due tonight but will be near its expiry; a lapsed row is reached by the
    /// lapsed sweep on its turn while it lapsed less than 180 days ago, and then by no night.
    @Test(arguments: [
        ("unverified", Self.row { $0 = .unverified }, false, true, true),
        ("uploaded", Self.row { _ in }, true, true, true),
        ("active far from expiry", Self.row { _ in }, false, false, true),
        ("expires in 24 h", Self.row { $0.expiresAt = Self.now + Self.day }, false, true, true),
        ("expired 47 h ago", Self.row { $0.expiresAt = Self.now - 47 * 3_600_000 }, false, true, true),
        ("expired 49 h ago", Self.row { $0.expiresAt = Self.now - 49 * 3_600_000; $0.expirationIntent = 1 }, false, false, true),
        ("grace ended 23 h ago", Self.row { $0.expiresAt = Self.now - 17 * Self.day; $0.gracePeriodExpiresAt = Self.now - 23 * 3_600_000 }, false, true, true),
        ("grace ended 25 h ago, retry over", Self.row { $0.expiresAt = Self.now - 17 * Self.day; $0.gracePeriodExpiresAt = Self.now - 25 * 3_600_000 }, false, false, true),
        ("refunded long ago", Self.row { $0.expiresAt = Self.now - 90 * Self.day; $0.cancelledAt = Self.now - 95 * Self.day }, false, false, true),
        ("lapsed 181 days ago", Self.row { $0.expiresAt = Self.now - 181 * Self.day; $0.expirationIntent = 1 }, false, false, false),
    ])
    func tonightAndLater(name: String, state: SubscriptionState, uploaded: Bool, tonight: Bool, later: Bool) {
        #expect(Self.bounds.selects(state, receiptUploaded: uploaded) == tonight, "\(name)")
        #expect(Self.bounds.selectsNowOrLater(state, receiptUploaded: uploaded) == later, "\(name)")
    }

    /// Fresh data skips a row tonight only: a later night asks it again once the data is stale.
    @Test func freshDataSkipsTonightNotLater() {
        let state = Self.row { $0.expiresAt = Self.now + 3_600_000 }
        #expect(!Self.bounds.selects(state, appleStateAtMs: Self.now - 3_600_000))
        #expect(Self.bounds.selectsNowOrLater(state))
        #expect(SelectionWindows.defaultFreshWithin == .seconds(12 * 3600))
        #expect(SelectionWindows(freshWithin: .zero).bounds(nowMs: Self.now).freshSince == nil)
        #expect(SelectionWindows(freshWithin: nil).bounds(nowMs: Self.now).selects(state, appleStateAtMs: Self.now))
    }
}

extension SelectionWindowsTests {
    /// A lapsed row on its sweep turn: asked, unless Apple's notification history has been read
    /// without a gap since before its data was recorded — then a comeback would have come as a
    /// notification, and the sweep leaves it out. Another environment's coverage does not count.
    @Test func aLapsedRowTheHistoryCoversIsLeftOutOfTheSweep() {
        let lapsed = Self.row { $0.expiresAt = Self.now - 7 * Self.day - 3_600_000; $0.expirationIntent = 1; $0.autoRenewStatus = false }
        let recorded = Self.now - 7 * Self.day + 3_600_000  // the EXPIRED notification, an hour later
        var windows = SelectionWindows(freshWithin: nil)
        #expect(windows.bounds(nowMs: Self.now).selectsOnlyAsLapsed(lapsed))
        #expect(windows.bounds(nowMs: Self.now).selects(lapsed, appleStateAtMs: recorded))
        windows.coveredFrom = ["Production": recorded - Self.day]
        #expect(!windows.bounds(nowMs: Self.now).selects(lapsed, appleStateAtMs: recorded))
        #expect(windows.bounds(nowMs: Self.now).selects(lapsed, appleStateAtMs: recorded - 2 * Self.day))  // recorded before the coverage
        #expect(windows.bounds(nowMs: Self.now).selects(lapsed, receiptUploaded: true, appleStateAtMs: recorded))
        windows.coveredFrom = ["Sandbox": recorded - Self.day]
        #expect(windows.bounds(nowMs: Self.now).selects(lapsed, appleStateAtMs: recorded))
    }
}
