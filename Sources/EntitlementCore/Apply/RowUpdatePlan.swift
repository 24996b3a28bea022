/// What one result does to one row, decided before anything is written, from the row as the
/// write transaction locked it and from who owns the chains it may adopt. Every writer applies
/// plans — SQLite row by row, PostgreSQL in set-based statements, the dry run not at all — so the
/// product's rules live here once: a deleted row is left alone, an answer for a replaced receipt
/// is dropped, a new row adopts the first chain of its receipt no other row owns (or records a
/// conflict and grants nothing), an answer about the row's own chain is merged with what the row
/// holds part by part (``ChainMerge``: a message about another period never moves the row back),
/// the contract columns are written with their bookkeeping, every change gets one audit row, and
/// the receipt's other unowned chains are enrolled.
public struct RowUpdatePlan: Sendable, Equatable {
    /// The row as the writer found it, locked for its transaction.
    public struct LockedRow: Sendable, Equatable {
        public var userID: String
        /// Whether `latest_receipt` is still the receipt a verified result was asked with (false:
        /// the web service replaced it meanwhile). A store compares it where the receipt is, so a
        /// receipt of kilobytes need not be read for it.
        public var holdsReceiptSent: Bool
        public var state: SubscriptionState
        /// When the Apple data the row holds was true (`apple_state_at`); nil before it was kept.
        public var appleStateAtMs: Int64?
        /// The run holding the row's lease, on a store shared by workers; nil when none.
        public var leaseRun: Int64?
        /// When Apple's data about the row's transaction was true (`transaction_signed_at`); nil
        /// before it was kept.
        public var transactionAsOfMs: Int64?
        /// When the ledger holds the answer's revoked transactions as revoked, by id (read under
        /// the row's lock): a refund already counted, whoever brought it, is not recorded again.
        public var ledgerRevokedAtMs: [String: Int64] = [:]

        public init(
            userID: String, holdsReceiptSent: Bool, state: SubscriptionState, appleStateAtMs: Int64? = nil, leaseRun: Int64? = nil,
            transactionAsOfMs: Int64? = nil
        ) {
            self.userID = userID
            self.holdsReceiptSent = holdsReceiptSent
            self.state = state
            self.appleStateAtMs = appleStateAtMs
            self.leaseRun = leaseRun
            self.transactionAsOfMs = transactionAsOfMs
        }
    }

    /// What the row's own columns get.
    public enum Columns: Sendable, Equatable {
        /// Nothing: the row is gone, its receipt was replaced, or another run holds its lease.
        case untouched
        /// Bookkeeping only (`last_attempt_at`, `last_error…`, `consecutive_failures + 1`); the
        /// contract columns are deliberately not in this case.
        case failure(VerificationFailure)
        /// The contract columns, Apple's `latest_receipt` (nil keeps the row's), when Apple's data
        /// was true (`apple_state_at`), and the bookkeeping of a success.
        case verified(SubscriptionState, latestReceipt: String?, status: UpstreamStatus, appleStateAtMs: Int64)
    }

    /// One audit row of the subscription the plan is for.
    public struct Event: Sendable, Equatable {
        public var reason: AuditReason
        public var old: SubscriptionState
        public var new: SubscriptionState
        /// The transaction a change concerns (`subscription_events.transaction_id`): the row's after it, or another period's.
        public var transactionID: String? = nil
        /// When Apple revoked that transaction (`subscription_events.revoked_at`): a refund's instant.
        public var revokedAtMs: Int64? = nil

        public init(reason: AuditReason, old: SubscriptionState, new: SubscriptionState, transactionID: String? = nil, revokedAtMs: Int64? = nil) {
            self.reason = reason
            self.old = old
            self.new = new
            self.transactionID = transactionID
            self.revokedAtMs = revokedAtMs
        }
    }

    public var subscriptionID: Int64
    /// Who brought the result, for the trail.
    public var provenance: Provenance
    public var runID: Int64? { provenance.runID }
    /// When the result was obtained (the run's clock), ms.
    public var atMs: Int64
    /// The backend's status of the answer, when there was one.
    public var upstreamStatus: UpstreamStatus?
    /// When the answer's Apple data was true (nil for a failure): the discovered rows keep it too.
    public var appleStateAtMs: Int64?
    /// The user of the row, for the trail and the discovered rows; nil when the row is gone.
    public var userID: String?
    public var columns: Columns
    /// The row's audit rows, in order.
    public var events: [Event]
    /// The receipt's other chains no row owns: each is enrolled as a row of the same user, with
    /// `discoveredReceipt`, and gets a `discovered` audit row.
    public var discovered: [SubscriptionState]
    public var discoveredReceipt: String?
    /// What the writer answers for a verified result (nil for a failure).
    public var result: VerifiedWriteResult?
    /// Data no receipt was sent for (a notification) leaves a receipt the web service uploaded
    /// due: only a poll verifies that receipt, which may hold another chain.
    public var keepsUploadedReceiptDue: Bool
    /// Whether the result counts as written for the run's work (PostgreSQL marks the row done and
    /// releases its lease): false when the row is gone or another run holds its lease.
    public var isWritten: Bool
    /// When Apple's data about the row's transaction was true, written with the columns.
    public var transactionAsOfMs: Int64?
    /// The row is to be asked about at the next run (`receipt_uploaded` set): the messages held
    /// cannot settle it (Apple's status disagreed with the columns they give).
    public var asksApple = false
    /// Whether Apple's status (a V2 notification's) agreed with the columns written; nil: none to check.
    public var statusAgrees: Bool?
    /// The answer's transactions of the chains the row owns or enrols, for the ledger: written
    /// with the row, and for a stale answer too (its facts may be the only price known), never for
    /// an answer the row does not take (superseded, conflict) or a failure.
    public var ledger: [LedgerEntry] = []

    /// The plan of `result` for the row as locked (nil: deleted). `ownerOf` answers which row owns
    /// an `original_transaction_id` as the transaction sees it (this row's own id is ignored).
    public init(_ result: ResultBatch.Result, current: LockedRow?, ownerOf: (String) throws -> Int64?) rethrows {
        let id = result.subscriptionID
        subscriptionID = id
        provenance = result.provenance
        userID = current?.userID
        appleStateAtMs = nil
        columns = .untouched
        events = []
        discovered = []
        isWritten = false
        keepsUploadedReceiptDue = false
        switch result {
        case .failed(let failed):
            atMs = failed.attemptedAtMs
            upstreamStatus = failed.failure.upstreamStatus
            self.result = nil
            guard let current, !Self.leasedByAnotherRun(current, result: failed.runID) else { return }
            columns = .failure(failed.failure)
            isWritten = true
        case .verified(let update):
            atMs = update.verifiedAtMs
            upstreamStatus = update.upstreamStatus
            appleStateAtMs = update.appleStateAtMs
            keepsUploadedReceiptDue = update.receiptSent == nil
            guard let current else {
                self.result = .missing
                return
            }
            if Self.leasedByAnotherRun(current, result: update.runID) {
                self.result = .superseded
                return
            }
            isWritten = true
            guard current.holdsReceiptSent else {
                self.result = .superseded
                return
            }
            var state = update.state
            var adoptedInstead: SubscriptionState?
            var appleStateAtMs = update.appleStateAtMs
            transactionAsOfMs = update.appleStateAtMs
            if let chain = state.originalTransactionID, chain == current.state.originalTransactionID {
                // The row's own chain: the answer's parts merged with what the row holds.
                let merge = ChainMerge(held: current, update: update)
                if merge.isOlder, merge.state == current.state, merge.periodEvents.isEmpty {
                    events = [Event(reason: .stale, old: current.state, new: update.state)]
                    ledger = Self.ledger(of: update, chain: chain, subscriptionID: id) { _ in .factsOnly }
                    self.result = .stale
                    return
                }
                state = merge.state
                appleStateAtMs = merge.appleStateAtMs
                transactionAsOfMs = merge.transactionAsOfMs
                events = merge.periodEvents
                asksApple = merge.asksApple
                statusAgrees = merge.statusAgrees
            } else if let held = current.appleStateAtMs, update.appleStateAtMs < held {
                events = [Event(reason: .stale, old: current.state, new: update.state)]
                self.result = .stale
                return
            }
            if let chain = state.originalTransactionID, chain != current.state.originalTransactionID {
                let adoption = try ChainAdoption(candidates: [state] + update.otherChains) { otid in
                    try ownerOf(otid).flatMap { $0 == id ? nil : $0 }
                }
                switch adoption {
                case .conflict(let owner):
                    columns = .failure(.conflict(chain: chain, owner: owner, upstreamStatus: update.upstreamStatus))
                    events = [Event(reason: .conflict, old: current.state, new: current.state)]
                    self.result = .conflict(owner: owner)
                    return
                case .adopt(let adopted, let others):
                    if adopted != state { adoptedInstead = adopted }
                    state = adopted
                    discovered = others
                    discoveredReceipt = update.latestReceipt ?? update.receiptSent
                }
            }
            columns = .verified(state, latestReceipt: update.latestReceipt, status: update.upstreamStatus, appleStateAtMs: appleStateAtMs)
            if current.state != state, !state.onlyGainsTransactionIdentity(from: current.state) {
                let transition = SubscriptionTransition.between(current.state, state, at: atMs)
                // A change names the transaction the row holds after it (a refund also its instant), as
                // a change of another period names its own: a refund is counted once by id.
                events.append(Event(
                    reason: .transition(transition), old: current.state, new: state,
                    transactionID: state.transactionID, revokedAtMs: transition == .refunded ? state.cancelledAt : nil))
            }
            self.result = .written(previous: current.state, adopted: adoptedInstead, discovered: discovered.count)
            if let chain = state.originalTransactionID {
                let rowAsOf = transactionAsOfMs ?? update.appleStateAtMs, held = state.transactionID
                ledger = Self.ledger(of: update, chain: chain, subscriptionID: id) { transaction in
                    guard transaction.transactionID == held else { return .newerWins }
                    return rowAsOf <= update.appleStateAtMs ? .heldByRow : .factsOnly
                }
                if SubscriptionTransition.endsBillingRetry(current.state, state), let index = Self.recovery(in: ledger, after: current.state, current: held) {
                    ledger[index].endsBillingRetry = true
                }
            }
            for chain in discovered.compactMap(\.originalTransactionID) {
                ledger += Self.ledger(of: update, chain: chain, subscriptionID: nil) { _ in .newerWins }
            }
        }
    }

    /// The ledger entries of `update`'s transactions of `chain` that are subscription periods
    /// (an id and an expiry, as ``SubscriptionChain`` counts them).
    private static func ledger(
        of update: VerifiedUpdate, chain: String, subscriptionID: Int64?, precedence: (SubscriptionTransaction) -> LedgerEntry.Precedence
    ) -> [LedgerEntry] {
        update.transactions.compactMap { transaction in
            guard transaction.originalTransactionID == chain, transaction.expiresDateMs != nil else { return nil }
            let entry = LedgerEntry(
                transaction: transaction, subscriptionID: subscriptionID, environment: transaction.facts.environment ?? update.state.environment,
                asOfMs: update.appleStateAtMs, source: update.ledgerSource, atMs: update.verifiedAtMs, precedence: precedence(transaction))
            return entry.key == nil ? nil : entry
        }
    }

    /// The entry of the transaction a row recovered from billing retry with (the report's money
    /// recovered): the first bought after the period whose renewal failed — an answer may also
    /// carry a later renewal — else the row's new transaction.
    private static func recovery(in ledger: [LedgerEntry], after failed: SubscriptionState, current: String?) -> Int? {
        let bought = ledger.indices.filter { (ledger[$0].transaction.purchaseDateMs ?? .min) > (failed.expiresAt ?? .max) }
        return bought.min { ledger[$0].transaction.purchaseDateMs! < ledger[$1].transaction.purchaseDateMs! }
            ?? ledger.firstIndex { $0.transaction.transactionID == current }
    }

    /// The lifecycle change the plan writes (`unchanged` when the contract columns stay as they
    /// were); nil unless it writes the contract columns. The report reads it from the trail's event.
    public var transition: SubscriptionTransition? {
        guard case .verified = columns else { return nil }
        for event in events { if case .transition(let transition) = event.reason { return transition } }
        return .unchanged
    }

    /// A worker's result for a row whose lease another run took over (it expired): the other
    /// run's answer is the one written.
    private static func leasedByAnotherRun(_ row: LockedRow, result runID: Int64?) -> Bool {
        guard let runID, let leaseRun = row.leaseRun else { return false }
        return leaseRun != runID
    }
}

extension VerificationFailure {
    /// The answer's chain belongs to another row (another user replayed this receipt).
    public static func conflict(chain: String, owner: Int64, upstreamStatus: UpstreamStatus?) -> Self {
        VerificationFailure(.conflict, "original_transaction_id \(chain) belongs to subscription \(owner)", upstreamStatus: upstreamStatus)
    }
}
