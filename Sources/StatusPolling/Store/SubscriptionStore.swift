/// What the run needs from a database. The SQLite store implements it today; a PostgreSQL store
/// shared by several workers can implement it later without touching the run or the decision.
public protocol SubscriptionStore: Sendable {
    /// The ids of the rows a run covers, in `id` order, those up to `cursor` left out (a resumed
    /// backfill's checkpoint). Read from indexes only, once at the start of a run, so the cost
    /// follows the due rows and not the size of the table; the run then reads the rows in pages.
    func dueSubscriptionIDs(_ selection: RowSelection, nowMs: Int64, after cursor: Int64) async throws -> [Int64]

    /// The rows with these ids, in `id` order; a row deleted meanwhile is left out.
    func subscriptions(ids: [Int64]) async throws -> [SubscriptionRow]

    /// The row that owns `originalTransactionID`, if any: lets a dry run report conflicts.
    func subscriptionID(owning originalTransactionID: String) async throws -> Int64?

    /// Writes a batch of results in one transaction, in order, and the batch's checkpoint with them.
    /// A verified result writes the contract columns, the new receipt, the bookkeeping and an audit
    /// event when a contract column changed — unless the chain belongs to another row (an earlier
    /// result of the same batch included) or the receipt was replaced meanwhile. A failed result
    /// writes bookkeeping only. Returns, in order, what each verified result did (nil for a failure).
    func write(_ batch: ResultBatch) async throws -> [VerifiedWriteResult?]

    /// Opens a run in the run history and returns its id.
    func startRun(_ start: RunStart) async throws -> Int64

    /// Opens a backfill: a run whose target rows are fixed now, so `--resume` finishes that set.
    func startBackfill(_ start: RunStart, targets: BackfillTargets) async throws -> (runID: Int64, targets: Int)

    /// The backfill to resume: the latest one that did not finish, with its checkpoint.
    func resumableBackfill() async throws -> RunRecord?

    /// Marks a run as running again (a resumed backfill) under this process.
    func resumeRun(_ runID: Int64, pid: Int32, host: String) async throws

    /// Closes a run with its report, status and exit code.
    func finishRun(_ runID: Int64, report: RunReport, status: RunStatus, checkpoint: Int64?) async throws
}

/// Which rows a run reads.
public enum RowSelection: Sendable, Equatable {
    /// The nightly selection: rows whose access may be changing.
    case nightly(SelectionWindows)
    /// The targets fixed when the backfill with this run id started.
    case backfill(runID: Int64)
}

/// Which rows a backfill covers; it ignores the nightly windows.
public enum BackfillTargets: Sendable, Equatable {
    case all
    case userIDs([String])
    /// Rows whose `expires_at` is at or after this instant (ms), and rows never verified.
    case expiredSince(Int64)
}

/// A successful verification, ready to be written.
public struct VerifiedUpdate: Sendable, Equatable {
    public var subscriptionID: Int64
    /// The run that made the change, for the audit trail.
    public var runID: Int64?
    /// The receipt that was sent: the write is skipped when the web service replaced it meanwhile.
    public var receiptSent: String
    public var state: SubscriptionState
    /// Apple's `latest_receipt`, stored in place of the one sent; nil keeps the one sent.
    public var latestReceipt: String?
    /// The backend's status of the answer, for the bookkeeping and the audit trail.
    public var upstreamStatus: UpstreamStatus
    public var verifiedAtMs: Int64

    public init(subscriptionID: Int64, runID: Int64? = nil, receiptSent: String, state: SubscriptionState, latestReceipt: String?, upstreamStatus: UpstreamStatus, verifiedAtMs: Int64) {
        self.subscriptionID = subscriptionID
        self.runID = runID
        self.receiptSent = receiptSent
        self.state = state
        self.latestReceipt = latestReceipt
        self.upstreamStatus = upstreamStatus
        self.verifiedAtMs = verifiedAtMs
    }
}

/// What writing a successful verification did.
public enum VerifiedWriteResult: Sendable, Equatable {
    /// The contract columns were written; `previous` is what they held inside the transaction.
    case written(previous: SubscriptionState)
    /// The chain belongs to row `owner`: nothing was granted, the conflict is in the bookkeeping.
    case conflict(owner: Int64)
    /// The web service replaced `latest_receipt` while Apple was being asked: the answer is for an
    /// older receipt, so nothing was written; the next run verifies the new one.
    case superseded
    /// The row was deleted meanwhile.
    case missing
}

/// A failed verification, ready to be recorded.
public struct FailedVerification: Sendable, Equatable {
    public var subscriptionID: Int64
    public var runID: Int64?
    public var failure: VerificationFailure
    public var attemptedAtMs: Int64

    public init(subscriptionID: Int64, runID: Int64? = nil, failure: VerificationFailure, attemptedAtMs: Int64) {
        self.subscriptionID = subscriptionID
        self.runID = runID
        self.failure = failure
        self.attemptedAtMs = attemptedAtMs
    }
}

/// Which rows a nightly run sends to Apple, relative to the run's clock: never verified, a receipt
/// newly uploaded by the web service, near expiry, in billing retry, in or just out of a grace
/// period. Everything else (an active subscription far from expiry, one long lapsed) is left alone.
public struct SelectionWindows: Sendable, Equatable {
    /// Rows that expired at most this long ago…
    public var nearExpiryBefore: Duration
    /// …or expire within this long.
    public var nearExpiryAfter: Duration
    /// Rows in billing retry, up to this long past expiry (Apple retries for 60 days).
    public var billingRetryPastExpiry: Duration
    /// Rows in a grace period, or whose grace period ended at most this long ago.
    public var graceEndedWithin: Duration

    public init(
        nearExpiryBefore: Duration = .seconds(48 * 3600), nearExpiryAfter: Duration = .seconds(24 * 3600),
        billingRetryPastExpiry: Duration = .seconds(60 * 86400), graceEndedWithin: Duration = .seconds(24 * 3600)
    ) {
        self.nearExpiryBefore = nearExpiryBefore
        self.nearExpiryAfter = nearExpiryAfter
        self.billingRetryPastExpiry = billingRetryPastExpiry
        self.graceEndedWithin = graceEndedWithin
    }

    /// The bounds in milliseconds for a run at `nowMs`, as the store's query uses them.
    public func bounds(nowMs: Int64) -> Bounds {
        Bounds(
            nearExpiryFrom: nowMs - nearExpiryBefore.milliseconds,
            nearExpiryTo: nowMs + nearExpiryAfter.milliseconds,
            billingRetryExpiredSince: nowMs - billingRetryPastExpiry.milliseconds,
            graceEndedSince: nowMs - graceEndedWithin.milliseconds)
    }

    /// The selection as absolute times (ms since 1970), inclusive.
    public struct Bounds: Sendable, Equatable {
        public var nearExpiryFrom: Int64
        public var nearExpiryTo: Int64
        public var billingRetryExpiredSince: Int64
        public var graceEndedSince: Int64

        /// Whether a row with `state` is selected: the same rule as the store's SQL, for tests and
        /// for stores that cannot filter.
        public func selects(_ state: SubscriptionState, receiptUploaded: Bool = false) -> Bool {
            guard state.originalTransactionID != nil, !receiptUploaded else { return true }
            if let expires = state.expiresAt {
                if (nearExpiryFrom...nearExpiryTo).contains(expires) { return true }
                if state.isInBillingRetry, expires >= billingRetryExpiredSince { return true }
            }
            if let grace = state.gracePeriodExpiresAt, grace >= graceEndedSince { return true }
            return false
        }
    }
}
