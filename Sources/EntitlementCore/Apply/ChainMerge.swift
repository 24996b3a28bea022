/// How an answer about the chain a row already holds combines with what the row holds. A
/// subscription is all the transactions of its chain; a message may be about any of them (a
/// refund of last month arrives while this month is paid for), so each part of an answer changes
/// only what it is authoritative for:
///
/// - the renewal info (auto-renew, next product, intent, billing retry, grace period) and the
///   environment: the newest Apple data wins, as a whole;
/// - the transaction: a later period than the row's becomes the row's; a newer signing of the
///   row's own period replaces it (a refund sets `cancelled_at`, `REFUND_REVERSED` clears it); an
///   earlier period never moves `expires_at` or `product_id` back — its refund is an audit row
///   of its own (`refunded_earlier_period`) and takes no access;
/// - Apple's `status` (a V2 notification's, as of its `signedDate`) checks the result: when the
///   row would say otherwise, it is asked about again.
///
/// Pure, so every order of a chain's messages is a unit test; ``RowUpdatePlan`` calls it for
/// every writer (poll, push, history catch-up).
struct ChainMerge: Equatable {
    /// The columns the row comes to.
    var state: SubscriptionState
    /// When the Apple data the row holds was true: the newer of the row's and the answer's.
    var appleStateAtMs: Int64
    /// When Apple's data about the row's transaction was true (`transaction_signed_at`).
    var transactionAsOfMs: Int64?
    /// Audit rows for periods other than the row's own (refunds of earlier periods), before any
    /// change of the row's columns.
    var periodEvents: [RowUpdatePlan.Event] = []
    /// Whether the answer was older than what the row holds (its renewal info was not taken).
    var isOlder: Bool
    /// Whether Apple's status agreed with `state` (nil: no status to check, or an older answer).
    var statusAgrees: Bool?
    /// The row cannot be settled from the messages held: ask Apple (Apple's status disagreed,
    /// or the row's own period was upgraded away and its successor is not known yet).
    var asksApple = false

    /// How an answer's transaction relates to the row's.
    enum Period: Equatable { case same, later, earlier }

    init(held: RowUpdatePlan.LockedRow, update: VerifiedUpdate) {
        let row = held.state, answer = update.state, evidence = update.evidence
        isOlder = held.appleStateAtMs.map { update.appleStateAtMs < $0 } ?? false
        appleStateAtMs = max(update.appleStateAtMs, held.appleStateAtMs ?? .min)

        // The transaction: the row's period, a newer signing of it, or a later one.
        let period = Self.period(of: answer, comparedWith: row, scope: evidence.scope, isOlder: isOlder)
        let heldAsOf = held.transactionAsOfMs ?? held.appleStateAtMs ?? .min
        let takesTransaction: Bool
        switch period {
        case .same: takesTransaction = !evidence.isUpgraded && update.appleStateAtMs >= heldAsOf
        case .later: takesTransaction = !evidence.isUpgraded
        case .earlier: takesTransaction = false
        }
        if evidence.isUpgraded && period == .same { asksApple = true }
        var merged = row
        if takesTransaction {
            merged.takeTransaction(from: answer)
            transactionAsOfMs = update.appleStateAtMs
        } else {
            transactionAsOfMs = held.transactionAsOfMs
        }
        // The renewal info and the environment: the newest Apple data wins.
        if !isOlder { merged.takeRenewalInfo(from: answer) }
        state = merged

        periodEvents = Self.earlierPeriodEvents(held: held, update: update, period: period, state: row)
        if !isOlder, let status = evidence.appleStatus {
            let agrees = AppleSubscriptionStatus(of: merged, at: update.appleStateAtMs) == status
            statusAgrees = agrees
            if !agrees { asksApple = true }
        }
    }

    /// Whether `answer`'s transaction is the row's own period, a later one or an earlier one. Ids
    /// decide when both are known; otherwise the dates do (two periods of one chain never share a
    /// purchase date and an expiry). An answer that speaks for the chain's latest transaction is
    /// taken whole when the row holds no transaction id yet (rows verified before it was kept)
    /// and the answer is newer: there is nothing to compare, and Apple named the latest.
    static func period(of answer: SubscriptionState, comparedWith row: SubscriptionState, scope: AnswerScope, isOlder: Bool) -> Period {
        if row.expiresAt == nil && row.transactionID == nil { return .later }
        if let id = answer.transactionID, id == row.transactionID { return .same }
        if scope == .latestTransaction, row.transactionID == nil || answer.transactionID == nil, !isOlder { return .later }
        let samePurchase = answer.purchasedAt == nil || row.purchasedAt == nil || answer.purchasedAt == row.purchasedAt
        if answer.expiresAt == row.expiresAt, samePurchase, answer.transactionID == nil || row.transactionID == nil { return .same }
        if let bought = answer.purchasedAt, let held = row.purchasedAt, bought != held { return bought > held ? .later : .earlier }
        return (answer.expiresAt ?? .min) > (row.expiresAt ?? .min) ? .later : .earlier
    }

    /// The trail's rows for other periods: a refund of an earlier period, from the notification
    /// that brings it (each is applied once, by its id, whenever it arrives) or from a poll when
    /// Apple revoked it since the row's last Apple data; and a refund of an earlier period
    /// reversed. A poll's first answer about a row records none: those periods ended before the
    /// row was watched. A refund the ledger already holds (the same transaction revoked at the
    /// same instant: a poll that read the whole history saw it before its notification came) is
    /// not recorded again.
    private static func earlierPeriodEvents(held: RowUpdatePlan.LockedRow, update: VerifiedUpdate, period: Period, state: SubscriptionState) -> [RowUpdatePlan.Event] {
        let answer = update.state
        var revoked: [RevokedTransaction] = []
        switch update.evidence.scope {
        case .oneTransaction:
            guard period == .earlier else { return [] }
            if let revokedAt = answer.cancelledAt {
                revoked.append(RevokedTransaction(transactionID: answer.transactionID, productID: answer.productID, revokedAtMs: revokedAt))
            } else if update.provenance.notificationType == "REFUND_REVERSED" {
                return [RowUpdatePlan.Event(reason: .refundReversedEarlierPeriod, old: state, new: state, transactionID: answer.transactionID)]
            }
        case .latestTransaction:
            guard let since = held.appleStateAtMs else { return [] }
            revoked = update.evidence.revokedPeriods.filter { $0.revokedAtMs > since }
        }
        let uncounted = revoked.filter { period in
            guard let id = period.transactionID else { return true }
            return held.ledgerRevokedAtMs[id] != period.revokedAtMs
        }
        return uncounted.map {
            RowUpdatePlan.Event(reason: .refundedEarlierPeriod, old: state, new: state, transactionID: $0.transactionID, revokedAtMs: $0.revokedAtMs)
        }
    }
}
