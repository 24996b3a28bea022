import EntitlementCore

/// The statements of ``ConsumptionLedger`` and of queueing inside a notification's transaction,
/// the same on both stores (only how the prior refunds read an old audit row's JSON differs), with
/// the mapping of their rows beside them.
public enum ConsumptionSQL {
    /// Queues `r` (``ConsumptionQueue/request(_:row:)``) unless its notification queued one before:
    /// a failed verification standing on the row makes it undelivered, and the customer's earlier
    /// refunds are counted, as the transaction sees them (``priorRefunds``).
    public static func enqueue(_ r: ConsumptionRequestRecord, _ dialect: SQLDialect) -> SQLStatement {
        """
        INSERT INTO consumption_requests (notification_id, transaction_id, original_transaction_id, subscription_id, user_id, environment,
            requested_at, deadline_at, period_started_at, delivery_status, prior_refunds, state, attempts, next_attempt_at)
        SELECT \(r.notificationID), \(r.transactionID), \(r.originalTransactionID), s.id, s.user_id, \(r.environment?.rawValue),
            \(r.requestedAtMs), \(r.deadlineMs), CAST(\(r.periodStartedAtMs) AS BIGINT),
            CASE WHEN s.consecutive_failures > 0 THEN 'UNDELIVERED_OTHER' ELSE \(r.deliveryStatus.rawValue) END,
            (\(unescaped: priorRefunds[dialect]!)),
            'pending', 0, \(r.nextAttemptAtMs)
        FROM subscriptions s WHERE s.id = \(r.subscriptionID)
        ON CONFLICT (notification_id) DO NOTHING
        """
    }

    /// The refunded transactions of the user of row `s`, each once by id, whoever saw it first: the
    /// ledger's revocations (an upgrade's end and a Family Sharing revocation are no refund), and
    /// the trail's refund rows of transactions the ledger does not hold. An audit row written
    /// before rows named their transaction names it in its new values (the row's own transaction,
    /// which the refund set `cancelled_at` on); one without any is its own refund.
    static let priorRefunds: [SQLDialect: String] = [
        .sqlite: priorRefunds(named: "coalesce(e.transaction_id, json_extract(e.new_values, '$.transaction_id'))"),
        .postgres: priorRefunds(named: "coalesce(e.transaction_id, e.new_values::json->>'transaction_id')"),
    ]

    private static func priorRefunds(named: String) -> String {
        """
        SELECT count(*) FROM (
            SELECT t.transaction_id FROM subscriptions s2 JOIN subscription_transactions t ON t.subscription_id = s2.id
            WHERE s2.user_id = s.user_id AND t.revoked_at IS NOT NULL AND t.is_upgraded = 0
                AND coalesce(t.revocation_type, '') <> 'FAMILY_REVOKE'
            UNION
            SELECT coalesce(n.named, 'audit ' || CAST(n.id AS TEXT)) FROM (
                SELECT e.id, \(named) AS named FROM subscription_events e
                WHERE e.user_id = s.user_id AND e.reason IN ('refunded', 'refunded_earlier_period')
            ) AS n
            WHERE NOT EXISTS (SELECT 1 FROM subscription_transactions h WHERE h.transaction_id = n.named)
        ) AS refunded
        """
    }

    /// Apple's decision on a transaction asked about: a `REFUND` (refunded) or `REFUND_DECLINED`
    /// (declined), recorded on every request of that transaction not yet decided.
    public static func decide(transactionID: String, decision: String, atMs: Int64) -> SQLStatement {
        "UPDATE consumption_requests SET decision = \(decision), decided_at = \(atMs) WHERE transaction_id = \(transactionID) AND decision IS NULL"
    }

    /// Takes a pending request due at `nowMs` for one send, until `untilMs`: the attempt counted,
    /// the body fixed at the first claim (a resend sends the same bytes). Returns the body to send;
    /// no row when another sender holds it or it is no longer pending.
    public static func claim(_ notificationID: String, nowMs: Int64, untilMs: Int64, body: String, preference: RefundPreference?) -> SQLStatement {
        """
        UPDATE consumption_requests SET attempts = attempts + 1, next_attempt_at = \(untilMs), body = coalesce(body, \(body)),
            refund_preference = CASE WHEN body IS NULL THEN \(preference?.rawValue) ELSE refund_preference END
        WHERE notification_id = \(notificationID) AND state = 'pending' AND next_attempt_at <= \(nowMs)
        RETURNING body
        """
    }

    /// Records what came of a pending request; one no longer pending is left as it is (a 202
    /// recorded is never overwritten).
    public static func settle(_ s: ConsumptionSettlement) -> SQLStatement {
        """
        UPDATE consumption_requests SET state = \(s.state.rawValue), apple_status = coalesce(\(s.appleStatus), apple_status),
            apple_error = \(s.appleError), next_attempt_at = coalesce(\(s.nextAttemptAtMs), next_attempt_at), sent_at = \(s.sentAtMs)
        WHERE notification_id = \(s.notificationID) AND state = 'pending'
        """
    }

    /// The web service's record of a customer's consent and last use.
    public static func consent(userID: String, consented: Bool, lastUsedAtMs: Int64?, nowMs: Int64) -> SQLStatement {
        """
        INSERT INTO consumption_consents (user_id, customer_consented, last_used_at, updated_at)
        VALUES (\(userID), \(consented), \(lastUsedAtMs), \(nowMs))
        ON CONFLICT (user_id) DO UPDATE SET customer_consented = excluded.customer_consented,
            last_used_at = coalesce(excluded.last_used_at, consumption_consents.last_used_at), updated_at = excluded.updated_at
        """
    }

    static let columns = """
        c.notification_id, c.transaction_id, c.original_transaction_id, c.subscription_id, c.user_id, c.environment, c.requested_at,
        c.deadline_at, c.period_started_at, c.delivery_status, c.prior_refunds, c.state, c.attempts, c.next_attempt_at, c.apple_status,
        c.apple_error, c.body, c.refund_preference, c.sent_at, c.decision, c.decided_at, cc.customer_consented, cc.last_used_at
        FROM consumption_requests c LEFT JOIN consumption_consents cc ON cc.user_id = c.user_id
        """

    /// Pending requests due at `nowMs`, oldest first.
    public static func due(nowMs: Int64, limit: Int) -> SQLStatement {
        "SELECT \(unescaped: columns) WHERE c.state = 'pending' AND c.next_attempt_at <= \(nowMs) ORDER BY c.requested_at, c.notification_id LIMIT \(limit)"
    }

    /// Recorded requests matching `query`, newest first.
    public static func list(_ query: ConsumptionQuery) -> SQLStatement {
        var conditions: [SQLStatement] = []
        if let states = query.states {
            conditions.append("c.state IN (\(unescaped: states.map { "'\($0.rawValue)'" }.joined(separator: ", ")))")
        }
        if let userID = query.userID { conditions.append("c.user_id = \(userID)") }
        if let id = query.notificationID { conditions.append("c.notification_id = \(id)") }
        return "SELECT \(unescaped: columns) \(SQLStatement(where: conditions)) ORDER BY c.requested_at DESC, c.notification_id DESC LIMIT \(query.limit)"
    }

    public static func read<Reader: ColumnReader>(_ row: inout Reader) throws -> ConsumptionRequestRecord {
        let id: String = try row.column(), transaction: String = try row.column(), chain: String? = try row.column()
        let subscription: Int64 = try row.column(), user: String = try row.column(), environment: String? = try row.column()
        let requested: Int64 = try row.column(), deadline: Int64 = try row.column(), periodStart: Int64? = try row.column()
        let delivery: String = try row.column(), priorRefunds: Int = try row.column(), state: String = try row.column()
        let attempts: Int = try row.column(), next: Int64 = try row.column(), appleStatus: Int? = try row.column(), appleError: Int? = try row.column()
        let body: String? = try row.column(), preference: String? = try row.column(), sent: Int64? = try row.column()
        let decision: String? = try row.column(), decided: Int64? = try row.column(), consented: Bool? = try row.column(), used: Int64? = try row.column()
        return ConsumptionRequestRecord(
            notificationID: id, transactionID: transaction, originalTransactionID: chain, subscriptionID: subscription, userID: user,
            environment: environment.flatMap(AppStoreEnvironment.init(rawValue:)), requestedAtMs: requested, deadlineMs: deadline,
            periodStartedAtMs: periodStart, deliveryStatus: DeliveryStatus(rawValue: delivery) ?? .undeliveredOther, priorRefunds: priorRefunds,
            state: ConsumptionState(rawValue: state) ?? .pending, attempts: attempts, nextAttemptAtMs: next, appleStatus: appleStatus,
            appleError: appleError, body: body, refundPreference: preference.flatMap(RefundPreference.init(rawValue:)), sentAtMs: sent,
            decision: decision, decidedAtMs: decided, customerConsented: consented, lastUsedAtMs: used)
    }
}
