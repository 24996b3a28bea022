/// Subscriptions by state at the end of each day, rebuilt from the trail's values as the
/// `entitlements` view would have said then. Each stretch of a subscription's columns adds +1/−1 to
/// per-state difference arrays over the days its state held, so the whole mix costs one pass.
struct StateMix {
    enum State: String, CaseIterable, Sendable {
        case activeRenewing = "active_renewing", activeCancelling = "active_cancelling", gracePeriod = "grace_period"
        case billingRetry = "billing_retry", expired, refunded

        var isEntitled: Bool { self == .activeRenewing || self == .activeCancelling || self == .gracePeriod }

        /// The state of `columns` at `ms` — the `entitlements` view's (`TrailState.entitlement(at:)`),
        /// active split by auto-renew; nil for a row never verified (not counted).
        init?(_ columns: TrailState, at ms: Int64) {
            switch columns.entitlement(at: ms) {
            case .unverified: return nil
            case .active: self = columns.autoRenewStatus == false ? .activeCancelling : .activeRenewing
            case .gracePeriod: self = .gracePeriod
            case .billingRetry: self = .billingRetry
            case .expired: self = .expired
            case .refunded: self = .refunded
            }
        }

        /// Its row in ``StateMix``'s difference arrays.
        var index: Int {
            switch self {
            case .activeRenewing: 0
            case .activeCancelling: 1
            case .gracePeriod: 2
            case .billingRetry: 3
            case .expired: 4
            case .refunded: 5
            }
        }
    }

    /// 00:00 UTC of the first day.
    let firstDayMs: Int64
    let days: Int
    /// One difference array of `days + 1` slots per state, end to end (state `s`, day `d` at
    /// `s * (days + 1) + d`): an add costs no lookup.
    private var deltas: [Int]

    init(firstDayMs: Int64, days: Int) {
        self.firstDayMs = firstDayMs
        self.days = days
        deltas = Array(repeating: 0, count: State.allCases.count * (days + 1))
    }

    /// The first day whose end is at or after `ms`, within 0…days.
    private func day(endingAtOrAfter ms: Int64) -> Int {
        let offset = ms - firstDayMs
        let day = offset <= 0 ? 0 : Int((offset + ReportCalendar.dayMs - 1) / ReportCalendar.dayMs) - 1
        return min(max(day, 0), days)
    }

    /// A subscription held `columns` over [startMs, endMs): it counts in each day that ends in
    /// that stretch, in the state the columns give at the day's end. Its state changes inside
    /// the stretch only where its expiry or its grace period's end falls.
    mutating func add(_ columns: TrailState, from startMs: Int64, to endMs: Int64) {
        guard startMs < endMs else { return }
        var first = columns.expiresAt ?? .max, second = columns.gracePeriodExpiresAt ?? .max
        if second < first { swap(&first, &second) }
        var from = startMs
        func stretch(until: Int64) {
            guard until > from, until <= endMs else { return }
            if let state = State(columns, at: from) {
                let row = state.index * (days + 1)
                deltas[row + day(endingAtOrAfter: from)] += 1
                deltas[row + day(endingAtOrAfter: until)] -= 1
            }
            from = until
        }
        stretch(until: first)
        stretch(until: second)
        stretch(until: endMs)
    }

    /// Counts by state at the end of each day.
    func counts() -> [[State: Int]] {
        var running = Array(repeating: 0, count: State.allCases.count)
        return (0..<days).map { day in
            var byState: [State: Int] = [:]
            for state in State.allCases {
                running[state.index] += deltas[state.index * (days + 1) + day]
                byState[state] = running[state.index]
            }
            return byState
        }
    }
}
