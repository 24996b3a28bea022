import EntitlementCore

/// Which received notifications queue an answer, and what is known of them then — one rule for
/// every store, applied in the transaction that records the notification: a `CONSUMPTION_REQUEST`
/// (V2 push or history, or V1) for a chain a row holds.
public enum ConsumptionQueue {
    /// Apple's window for an answer: 12 hours from the request's `signedDate`.
    public static let window: Int64 = 12 * 3_600_000

    /// The request `n` makes of `row`, to queue; nil when it asks nothing or names no transaction.
    public static func request(_ n: ReceivedNotification, row: SubscriptionRow) -> ConsumptionRequestRecord? {
        guard n.type == "CONSUMPTION_REQUEST", let answer = n.answer else { return nil }
        // V2 carries the one transaction asked about; V1 its chain, the latest purchase of which is asked about.
        let chain = answer.transactions.filter { $0.originalTransactionID == nil || $0.originalTransactionID == n.originalTransactionID }
        guard let transaction = n.version == 2 ? chain.first : chain.max(by: { ($0.purchaseDateMs ?? 0) < ($1.purchaseDateMs ?? 0) }),
            let transactionID = transaction.transactionID
        else { return nil }
        let requestedAt = n.signedAtMs ?? n.appleStateAtMs
        return ConsumptionRequestRecord(
            notificationID: n.id, transactionID: transactionID, originalTransactionID: n.originalTransactionID, subscriptionID: row.id,
            userID: row.userID, environment: n.environment, requestedAtMs: requestedAt, deadlineMs: requestedAt + window,
            periodStartedAtMs: transaction.purchaseDateMs, deliveryStatus: deliveryStatus(transaction, row: row),
            nextAttemptAtMs: n.receivedAtMs)
    }

    /// Delivered when the row holds the chain and gave access through the asked-about period (its
    /// expiry reaches the period's end, not cut short by a refund of that period); otherwise
    /// `UNDELIVERED_OTHER` (we cannot say more). A failed verification standing on the row turns
    /// it to `UNDELIVERED_OTHER` too, in the queueing statement (``ConsumptionSQL/enqueue(_:_:)``).
    static func deliveryStatus(_ transaction: SubscriptionTransaction, row: SubscriptionRow) -> DeliveryStatus {
        let state = row.state
        guard state.originalTransactionID != nil, state.originalTransactionID == transaction.originalTransactionID || transaction.originalTransactionID == nil
        else { return .undeliveredOther }
        let periodEnd = transaction.expiresDateMs ?? .max
        let cut = state.cancelledAt != nil && state.transactionID == transaction.transactionID
        return (state.expiresAt ?? .min) >= periodEnd && !cut ? .delivered : .undeliveredOther
    }

    /// Apple's decision on an asked-about transaction that `n` brings: `REFUND` (refunded) or
    /// `REFUND_DECLINED` (declined), with the transaction it names (V1: the revoked entry).
    public static func decision(_ n: ReceivedNotification) -> (transactionID: String, decision: String)? {
        let decision: String
        switch n.type {
        case "REFUND": decision = "refunded"
        case "REFUND_DECLINED": decision = "declined"
        default: return nil
        }
        let transactions = n.answer?.transactions ?? []
        let named = n.version == 2 ? transactions.first : transactions.first { $0.revocationDateMs != nil }
        return named?.transactionID.map { ($0, decision) }
    }

    /// What recording `n` writes to `consumption_requests` in its transaction: the request it
    /// queues for `row`, and Apple's decision it brings.
    public static func statements(for n: ReceivedNotification, row: SubscriptionRow?, _ dialect: SQLDialect) -> [SQLStatement] {
        var statements: [SQLStatement] = []
        if let row, let request = request(n, row: row) { statements.append(ConsumptionSQL.enqueue(request, dialect)) }
        if let (transactionID, decision) = decision(n) {
            statements.append(ConsumptionSQL.decide(transactionID: transactionID, decision: decision, atMs: n.signedAtMs ?? n.appleStateAtMs))
        }
        return statements
    }
}
