import EntitlementCore

/// Which rows a nightly run sends to Apple, relative to the run's clock: never verified, a receipt
/// newly uploaded by the web service, near expiry, in billing retry, in or just out of a grace
/// period, and lapsed ones on their turn in the lapsed sweep. Everything else (an active
/// subscription far from expiry, one lapsed longer than the sweep reaches) is left alone, and so is
/// a row in a window whose Apple data is fresh (``freshWithin``): a notification or an earlier run
/// told it, and nothing Apple schedules (an expiry, a grace period's end) has passed since.
public struct SelectionWindows: Sendable, Equatable {
    /// Rows that expired at most this long ago…
    public var nearExpiryBefore: Duration
    /// …or expire within this long.
    public var nearExpiryAfter: Duration
    /// Rows in billing retry, up to this long past expiry: Apple's retry period and a margin after
    /// it, so the night after the retries end hears Apple's final answer.
    public var billingRetryPastExpiry: Duration
    /// Rows in a grace period, or whose grace period ended at most this long ago.
    public var graceEndedWithin: Duration
    /// Lapsed rows, asked again on a spread schedule; nil turns the sweep off.
    public var lapsed: LapsedSweep?
    /// A row whose Apple data was recorded at most this long ago is not asked again, unless a
    /// receipt was uploaded since or its expiry or grace period's end passed since (`--fresh-within`);
    /// nil asks every row in a window.
    public var freshWithin: Duration?
    /// By environment (`Production`, `Sandbox`): Apple's notification history has been read
    /// without a gap from this instant through the run's start (the run's catch-up succeeded), so
    /// a row whose data was recorded since has heard every change Apple notified — fresh too.
    public var coveredFrom: [String: Int64] = [:]

    /// How long Apple retries a failed renewal: the App Store "attempts to collect payment for up
    /// to 60 days" (Apple, *Reducing Involuntary Subscriber Churn*; `shared/reference/insights.md`),
    /// then the subscription expires with `expiration_intent` 2 and billing retry 0.
    public static let appleBillingRetryPeriod: Duration = .seconds(60 * 86400)
    /// Nights a row in billing retry stays due after Apple's retries would have ended: the first
    /// hears the end, the others cover nights whose verification failed. Rows still marked in retry
    /// beyond it (an answer that never comes) stop costing requests.
    public static let billingRetryEndMargin: Duration = .seconds(7 * 86400)

    /// The near-expiry window unless configured (`--expired-within-hours`, `--expiring-within-hours`).
    public static let defaultNearExpiryBefore: Duration = .seconds(48 * 3600)
    public static let defaultNearExpiryAfter: Duration = .seconds(24 * 3600)
    /// Half a night: a nightly cron never skips the rows its previous night verified, while the
    /// rows a notification brought today are not asked again.
    public static let defaultFreshWithin: Duration = .seconds(12 * 3600)

    public init(
        nearExpiryBefore: Duration = Self.defaultNearExpiryBefore, nearExpiryAfter: Duration = Self.defaultNearExpiryAfter,
        billingRetryPastExpiry: Duration = Self.appleBillingRetryPeriod + Self.billingRetryEndMargin,
        graceEndedWithin: Duration = .seconds(24 * 3600), lapsed: LapsedSweep? = LapsedSweep(),
        freshWithin: Duration? = Self.defaultFreshWithin
    ) {
        self.nearExpiryBefore = nearExpiryBefore
        self.nearExpiryAfter = nearExpiryAfter
        self.billingRetryPastExpiry = billingRetryPastExpiry
        self.graceEndedWithin = graceEndedWithin
        self.lapsed = lapsed
        self.freshWithin = freshWithin
    }

    /// The bounds in milliseconds for a run at `nowMs`, as the store's query uses them.
    public func bounds(nowMs: Int64) -> Bounds {
        Bounds(
            nowMs: nowMs,
            nearExpiryFrom: nowMs - nearExpiryBefore.milliseconds,
            nearExpiryTo: nowMs + nearExpiryAfter.milliseconds,
            billingRetryExpiredSince: nowMs - billingRetryPastExpiry.milliseconds,
            graceEndedSince: nowMs - graceEndedWithin.milliseconds,
            lapsed: lapsed?.night(nowMs: nowMs),
            freshSince: freshWithin.flatMap { $0 > .zero ? nowMs - $0.milliseconds : nil }, coveredFrom: coveredFrom)
    }

    /// The selection as absolute times (ms since 1970), inclusive.
    public struct Bounds: Sendable, Equatable {
        /// The run's clock.
        public var nowMs: Int64
        public var nearExpiryFrom: Int64
        public var nearExpiryTo: Int64
        public var billingRetryExpiredSince: Int64
        public var graceEndedSince: Int64
        /// Tonight's turns of the lapsed sweep; nil when it is off.
        public var lapsed: LapsedSweep.Night?
        /// Apple data recorded at or after this is fresh; nil when nothing is.
        public var freshSince: Int64?
        /// ``SelectionWindows/coveredFrom``.
        public var coveredFrom: [String: Int64] = [:]

        /// Whether a row with `state` is selected: the same rule as the store's SQL, row by row,
        /// for tests and for stores that cannot filter. (The stores also select every row of a
        /// user who has a row with an uploaded receipt, which one row's state cannot tell.)
        public func selects(_ state: SubscriptionState, receiptUploaded: Bool = false, appleStateAtMs: Int64? = nil) -> Bool {
            selects(state, receiptUploaded: receiptUploaded, orLater: false)
                && !isFresh(state, receiptUploaded: receiptUploaded, appleStateAtMs: appleStateAtMs)
        }

        /// Whether the row's Apple data is fresh enough to skip it tonight (the run report's
        /// `skipped_fresh`): recorded since ``freshSince`` (or since its environment's
        /// ``coveredFrom``), no receipt uploaded since, and no moment Apple acts on (the expiry: a
        /// renewal or a billing failure; the grace period's end) between then and now. Something
        /// unscheduled (a refund, a recovery, a cancellation) reaches a fresh row by notification;
        /// a row that never had an answer is never fresh.
        public func isFresh(_ state: SubscriptionState, receiptUploaded: Bool, appleStateAtMs: Int64?) -> Bool {
            guard let recorded = appleStateAtMs, !receiptUploaded else { return false }
            let since = [freshSince, state.environment.flatMap { coveredFrom[$0] }].compactMap { $0 }.min()
            guard let since, recorded >= since else { return false }
            func passedSince(_ moment: Int64?) -> Bool { moment.map { $0 <= nowMs && $0 > recorded } ?? false }
            return !passedSince(state.expiresAt) && !passedSince(state.gracePeriodExpiresAt)
        }

        /// Whether tonight selects the row only because it is its turn in the lapsed sweep (the
        /// run report's `selected_lapsed`).
        public func selectsOnlyAsLapsed(_ state: SubscriptionState, receiptUploaded: Bool = false) -> Bool {
            guard let lapsed, isLapsed(state), let expires = state.expiresAt, lapsed.isTurn(expiresAt: expires) else { return false }
            var without = self
            without.lapsed = nil
            return !without.selects(state, receiptUploaded: receiptUploaded)
        }

        /// Whether any row can be fresh tonight (else the stores skip the check).
        public var canBeFresh: Bool { freshSince != nil || !coveredFrom.isEmpty }

        /// ``isFresh(_:receiptUploaded:appleStateAtMs:)`` in SQL on the table alias `f`, 1 or 0:
        /// the same text for SQLite and PostgreSQL, so both stores and the Swift rule agree.
        public func freshSQL(row f: String) -> String {
            var recent = freshSince.map { ["\(f).apple_state_at >= \($0)"] } ?? []
            for (environment, from) in coveredFrom.sorted(by: { $0.key < $1.key }) where ["Production", "Sandbox"].contains(environment) {
                recent.append("(\(f).environment = '\(environment)' AND \(f).apple_state_at >= \(from))")
            }
            guard !recent.isEmpty else { return "0" }
            return """
                CASE WHEN \(f).receipt_uploaded = 0 AND (\(recent.joined(separator: " OR ")))
                    AND (\(f).expires_at IS NULL OR \(f).expires_at > \(nowMs) OR \(f).expires_at <= \(f).apple_state_at)
                    AND (\(f).grace_period_expires_at IS NULL OR \(f).grace_period_expires_at > \(nowMs) OR \(f).grace_period_expires_at <= \(f).apple_state_at)
                    THEN 1 ELSE 0 END
                """
        }

        /// Whether the night of these bounds or a later one selects a row whose columns stay as
        /// they are: every window moves forward with the clock, so only their lower ends matter,
        /// and fresh data goes stale. False means the poller has stopped watching the row.
        public func selectsNowOrLater(_ state: SubscriptionState, receiptUploaded: Bool = false) -> Bool {
            selects(state, receiptUploaded: receiptUploaded, orLater: true)
        }

        private func selects(_ state: SubscriptionState, receiptUploaded: Bool, orLater: Bool) -> Bool {
            guard state.originalTransactionID != nil, !receiptUploaded else { return true }
            if let expires = state.expiresAt {
                if expires >= nearExpiryFrom, orLater || expires <= nearExpiryTo { return true }
                if state.isInBillingRetry, expires >= billingRetryExpiredSince { return true }
            }
            if let grace = state.gracePeriodExpiresAt, grace >= graceEndedSince { return true }
            if let lapsed, isLapsed(state), let expires = state.expiresAt {
                return orLater ? lapsed.hasTurnNowOrLater(expiresAt: expires) : lapsed.isTurn(expiresAt: expires)
            }
            return false
        }

        /// The sweep's rows: expired and not in billing retry (whose own window covers it).
        /// Refunded rows too: a refund ends a period, not the customer, who may come back.
        private func isLapsed(_ state: SubscriptionState) -> Bool {
            guard let expires = state.expiresAt, let lapsed else { return false }
            return !state.isInBillingRetry && expires < lapsed.nowMs
        }
    }
}
