import AppStoreSimulator
import EntitlementCore
import StatusPolling

/// Compares every row with the simulator's ground truth after a night's run.
///
/// - A row verified tonight must equal the truth at tonight's clock, column by column.
/// - A row whose verification failed tonight must hold exactly what it held before the run.
/// - A row not selected tonight must be unchanged, and equal the truth at its last verification.
///
/// The last rule is what status polling promises between nights, provided a later night selects
/// the row again. A row that differs from the truth now and that no later night will select (the
/// windows move forward, the row's columns stay) is one the poller has silently stopped watching:
/// those are counted apart, in ``unwatched``, and the demo fails on them.
///
/// With notifications (``Notified``) the promise is stronger: every row equals the App Store *now*,
/// whether or not tonight's run asked about it; only a row whose verification failed tonight, or
/// whose chain has a notification Apple has not sent yet (or, with V1, not delivered: V1 has no
/// history to catch up from), is exempt.
public struct TruthCheck: Sendable {
    /// What the check needs to know when notifications are on.
    public struct Notified: Sendable {
        /// Chains with a notification Apple has not sent yet, or (V1) not delivered.
        public var awaitingApple: Set<String>

        public init(awaitingApple: Set<String> = []) { self.awaitingApple = awaitingApple }
    }

    /// One row that does not hold what it should.
    public struct Disagreement: Sendable, CustomStringConvertible {
        public var subscriptionID: Int64
        public var userID: String
        public var what: String
        public var description: String { "subscription \(subscriptionID) (\(userID)): \(what)" }
    }

    public var clockMs: Int64
    public var rows = 0
    /// Verified tonight and equal to the truth now.
    public var verifiedTonight = 0
    /// Failed tonight, and kept their columns.
    public var failedTonight = 0
    /// Not selected tonight; equal to the truth at their last verification.
    public var untouched = 0
    /// Rows equal to the truth at tonight's clock, whatever their path.
    public var current = 0
    /// Paying users locked out: rows Apple entitles tonight that grant no access — a verification
    /// that failed (a fault) left them as they were, or the customer came back outside the app and
    /// no night has asked since. Never a revoke: their columns are what Apple said last time.
    public var lockedOut = 0
    public var disagreements: [Disagreement] = []
    /// Rows that differ from the truth now and that no later night selects, given the windows.
    public var unwatched: [Disagreement] = []
    /// Whether the backend hands out receipts (verifyReceipt's `latest_receipt`): then a verified
    /// row must hold Apple's latest. The Server API returns none, and the row keeps the one uploaded.
    public var receiptsFromBackend = true

    /// Rows that differ from the App Store now while Apple still owes their notification.
    public var awaitingApple = 0
    /// Chains verified tonight (the entitlement lag's polls).
    public var verifiedChains: [String] = []
    var notified: Notified?

    /// The bounds of the next night's selection, for ``unwatched``.
    var nextNight: SelectionWindows.Bounds

    init(clockMs: Int64, windows: SelectionWindows = SelectionWindows()) {
        self.clockMs = clockMs
        nextNight = windows.bounds(nowMs: clockMs + DemoConfiguration.dayMs)
    }

    /// Walks the table page by page. `before` holds each row's contract columns before tonight's
    /// run; `windows` are the nightly selection's.
    public static func run(
        store: any SubscriberDirectory, population: Population, clockMs: Int64, before: [Int64: SubscriptionState], receiptsFromBackend: Bool = true,
        windows: SelectionWindows = SelectionWindows(), notified: Notified? = nil
    ) async throws -> (TruthCheck, [Int64: SubscriptionState]) {
        var check = TruthCheck(clockMs: clockMs, windows: windows)
        check.receiptsFromBackend = receiptsFromBackend
        check.notified = notified
        var after: [Int64: SubscriptionState] = [:]
        var cursor: Int64 = 0
        while true {
            let page = try await store.subscriptionsWithBookkeeping(after: cursor, limit: 1000)
            for (row, bookkeeping) in page { check.inspect(row, bookkeeping, population: population, before: before[row.id]) }
            for (row, _) in page { after[row.id] = row.state }
            guard let last = page.last else { break }
            cursor = last.0.id
        }
        return (check, after)
    }

    mutating func inspect(_ row: SubscriptionRow, _ bookkeeping: SubscriptionBookkeeping, population: Population, before: SubscriptionState?) {
        rows += 1
        func disagree(_ what: String) { disagreements.append(.init(subscriptionID: row.id, userID: row.userID, what: what)) }
        guard let subscriber = population.subscriber(userID: row.userID) else {
            disagree("no such subscriber in the simulator")
            return
        }
        let truthNow = subscriber.entitlement(originalTransactionID: row.state.originalTransactionID, at: clockMs)
        let stateNow = truthNow.map(Self.state)
        if let stateNow, stateNow == row.state { current += 1 }
        if let stateNow, stateNow != row.state, !nextNight.selectsNowOrLater(row.state, receiptUploaded: row.receiptUploaded) {
            let differences = Self.differences(row.state, stateNow).joined(separator: ", ")
            unwatched.append(.init(subscriptionID: row.id, userID: row.userID, what: "differs from the App Store now (\(differences)) and no later night selects it"))
        }
        if let truthNow, truthNow.isEntitled, !row.state.entitlement(at: clockMs).isEntitled { lockedOut += 1 }

        if bookkeeping.lastVerifiedAt == clockMs {
            verifiedTonight += 1
            if let chain = row.state.originalTransactionID { verifiedChains.append(chain) }
            guard let truthNow, let stateNow else { return disagree("verified, but the simulator has no subscription for it") }
            let differences = Self.differences(row.state, stateNow)
            if !differences.isEmpty { disagree("verified tonight but " + differences.joined(separator: ", ")) }
            if receiptsFromBackend, row.latestReceipt != truthNow.latestReceipt { disagree("latest_receipt is not Apple's latest") }
            if truthNow.isEntitled, !row.state.entitlement(at: clockMs).isEntitled { disagree("access revoked while the App Store grants it") }
            return
        }
        if bookkeeping.lastAttemptAt == clockMs {
            failedTonight += 1
        } else {
            untouched += 1
        }
        if let notified {
            guard bookkeeping.lastAttemptAt != clockMs, let stateNow, stateNow != row.state else { return }
            if let chain = row.state.originalTransactionID, notified.awaitingApple.contains(chain) { return awaitingApple += 1 }
            return disagree("differs from the App Store now: " + Self.differences(row.state, stateNow).joined(separator: ", "))
        }
        if let before, before != row.state {
            disagree("not verified tonight, yet its columns changed: " + Self.differences(row.state, before).joined(separator: ", "))
        }
        if let verifiedAt = bookkeeping.lastVerifiedAt, let truthThen = subscriber.entitlement(originalTransactionID: row.state.originalTransactionID, at: verifiedAt) {
            let differences = Self.differences(row.state, Self.state(truthThen))
            if !differences.isEmpty { disagree("differs from the truth at its last verification: " + differences.joined(separator: ", ")) }
        }
    }

    /// The truth in the contract's terms.
    public static func state(_ truth: SimulatedEntitlement) -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: truth.originalTransactionID, productID: truth.productID, environment: truth.environment,
            expiresAt: truth.expiresAtMs, gracePeriodExpiresAt: truth.gracePeriodExpiresAtMs,
            isInBillingRetry: truth.isInBillingRetry, autoRenewStatus: truth.autoRenewStatus,
            autoRenewProductID: truth.autoRenewProductID, expirationIntent: truth.expirationIntent,
            cancelledAt: truth.cancelledAtMs, transactionID: truth.transactionID, purchasedAt: truth.purchaseMs, ownershipType: truth.ownershipType)
    }

    /// "column: row X, truth Y" for each contract column that differs.
    public static func differences(_ row: SubscriptionState, _ truth: SubscriptionState) -> [String] {
        row.changedColumns(comparedWith: truth).map { column in
            "\(column.rawValue): row \(column.value(in: row).text()), truth \(column.value(in: truth).text())"
        }
    }
}
