/// Rows that lapsed — expired, not in billing retry — asked again on a spread schedule, so a
/// subscriber who resubscribes outside the app (in the App Store's settings, through a win-back
/// offer) is found without a receipt upload: Apple keeps the chain's `original_transaction_id`
/// when a customer resubscribes in the same group, so replaying the row's receipt finds the new
/// period at once. No other window reaches such a row again after 48 hours.
///
/// A row's turn falls on the UTC days a whole number of periods after the UTC day it expired:
/// a function of the row and the night alone, never of when the job last ran. Each night takes
/// the rows that expired on a few days of the past (about one period's share of the lapsed ones),
/// each found by a range of the `expires_at` index; a night that does not run puts its share off
/// by one period, no more.
public struct LapsedSweep: Sendable, Equatable {
    /// How long after expiry a lapsed row is still asked; beyond it a row is left as it is. 180
    /// days covers a comeback months after a failed renewal's 60 days of billing retry, and is
    /// as far back as Apple's notification history reaches (`shared/reference/notifications.md`).
    public var within: Duration
    /// How often a lapsed row is asked: the longest a comeback outside the app goes unseen. A
    /// notification receiver that covers the rows (App Store Server Notifications) makes a longer
    /// period enough; set it here from the receiver's coverage.
    public var every: Duration

    public static let defaultWithin: Duration = .seconds(180 * 86400)
    public static let defaultEvery: Duration = .seconds(7 * 86400)
    /// The `within` a run accepts, in days (ten years at most).
    public static let allowedWithinDays = 1...3650
    /// Turns are whole UTC days.
    public static let dayMs: Int64 = 86_400_000

    /// `every` counts in whole days (rounded down, at least one): turns are UTC days.
    public init(within: Duration = Self.defaultWithin, every: Duration = Self.defaultEvery) {
        self.within = within
        self.every = every
    }

    /// The sweep at the night of `nowMs`.
    public func night(nowMs: Int64) -> Night {
        Night(nowMs: nowMs, sinceMs: nowMs - within.milliseconds, everyDays: max(1, every.milliseconds / Self.dayMs))
    }

    /// One night's turns.
    public struct Night: Sendable, Equatable {
        public var nowMs: Int64
        /// Rows that expired before this are left alone.
        public var sinceMs: Int64
        public var everyDays: Int64

        var today: Int64 { Self.day(of: nowMs) }

        static func day(of ms: Int64) -> Int64 {
            ms >= 0 ? ms / LapsedSweep.dayMs : (ms - LapsedSweep.dayMs + 1) / LapsedSweep.dayMs
        }

        /// The `expires_at` ranges (inclusive) whose rows take their turn tonight, the latest
        /// first: one UTC day every `everyDays` back from yesterday, down to `sinceMs`; adjacent
        /// days are merged (a daily sweep is one range).
        public var expiryRanges: [ClosedRange<Int64>] {
            var ranges: [ClosedRange<Int64>] = []
            var day = today - everyDays
            while true {
                let from = day * LapsedSweep.dayMs, through = from + LapsedSweep.dayMs - 1
                guard through >= sinceMs else { break }
                let range = max(from, sinceMs)...through
                if let last = ranges.last, last.lowerBound == range.upperBound + 1 {
                    ranges[ranges.count - 1] = range.lowerBound...last.upperBound
                } else {
                    ranges.append(range)
                }
                day -= everyDays
            }
            return ranges
        }

        /// Whether a lapsed row that expired at `expiresAt` takes its turn tonight.
        public func isTurn(expiresAt: Int64) -> Bool {
            let since = today - Self.day(of: expiresAt)
            return expiresAt >= sinceMs && since > 0 && since % everyDays == 0
        }

        /// Whether tonight or a later night gives the row a turn while it is still within the
        /// sweep (later nights at tonight's time of day, a day apart).
        public func hasTurnNowOrLater(expiresAt: Int64) -> Bool {
            let expiryDay = Self.day(of: expiresAt)
            let periods = max(1, (today - expiryDay + everyDays - 1) / everyDays)
            let turnNight = nowMs + (expiryDay + periods * everyDays - today) * LapsedSweep.dayMs
            return expiresAt >= turnNight - (nowMs - sinceMs)
        }
    }
}
