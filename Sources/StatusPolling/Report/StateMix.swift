/// Subscriptions by state at the end of each day, rebuilt from the trail's values as the
/// `entitlements` view would have said then. Each stretch of a subscription's columns adds +1/−1 to
/// per-state difference arrays over the days its state held, so the whole mix costs one pass.
struct StateMix {
    enum State: String, CaseIterable, Sendable {
        case activeRenewing = "active_renewing", activeCancelling = "active_cancelling", gracePeriod = "grace_period"
        case billingRetry = "billing_retry", expired, refunded

        var isEntitled: Bool { self == .activeRenewing || self == .activeCancelling || self == .gracePeriod }

        /// The state of `columns` at `ms` — the `entitlements` view's (`SubscriptionState.entitlement(at:)`),
        /// active split by auto-renew; nil for a row never verified (not counted).
        init?(_ columns: SubscriptionState, at ms: Int64) {
            switch columns.entitlement(at: ms) {
            case .unverified: return nil
            case .active: self = columns.autoRenewStatus == false ? .activeCancelling : .activeRenewing
            case .gracePeriod: self = .gracePeriod
            case .billingRetry: self = .billingRetry
            case .expired: self = .expired
            case .refunded: self = .refunded
            }
        }
    }

    static let dayMs: Int64 = 86_400_000
    /// 00:00 UTC of the first day.
    let firstDayMs: Int64
    let days: Int
    private var deltas: [State: [Int]]

    init(firstDayMs: Int64, days: Int) {
        self.firstDayMs = firstDayMs
        self.days = days
        deltas = Dictionary(uniqueKeysWithValues: State.allCases.map { ($0, Array(repeating: 0, count: days + 1)) })
    }

    /// The first day whose end is at or after `ms`, within 0…days.
    private func day(endingAtOrAfter ms: Int64) -> Int {
        let offset = ms - firstDayMs
        let day = offset <= 0 ? 0 : Int((offset + Self.dayMs - 1) / Self.dayMs) - 1
        return min(max(day, 0), days)
    }

    /// A subscription held `columns` over [startMs, endMs): it counts in each day that ends in
    /// that stretch, in the state the columns give at the day's end.
    mutating func add(_ columns: SubscriptionState, from startMs: Int64, to endMs: Int64) {
        guard startMs < endMs else { return }
        let changes = [columns.expiresAt, columns.gracePeriodExpiresAt].compactMap { $0 }.filter { $0 > startMs && $0 < endMs }.sorted()
        var from = startMs
        for until in changes + [endMs] where until > from {
            if let state = State(columns, at: from) {
                deltas[state]![day(endingAtOrAfter: from)] += 1
                deltas[state]![day(endingAtOrAfter: until)] -= 1
            }
            from = until
        }
    }

    /// Counts by state at the end of each day.
    func counts() -> [[State: Int]] {
        var running: [State: Int] = [:]
        return (0..<days).map { day in
            for state in State.allCases { running[state, default: 0] += deltas[state]![day] }
            return running
        }
    }
}
