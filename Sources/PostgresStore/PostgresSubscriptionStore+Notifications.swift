import Logging
import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
    public func receive(_ notifications: [ReceivedNotification], ingest: NotificationIngest, nowMs: Int64) async throws -> [NotificationOutcome] {
        guard !notifications.isEmpty else { return [] }
        return try await transaction { connection, logger in
            var outcomes: [NotificationOutcome] = []
            for notification in notifications {
                outcomes.append(try await Self.receive(notification, ingest: ingest, nowMs: nowMs, connection: connection, logger: logger))
            }
            return outcomes
        }
    }

    /// One notification inside the batch's transaction: claimed by its id first (a receiver taking
    /// the same id at once waits on the claim, then finds it a duplicate), then applied to its row
    /// through the row update plan, then its outcome recorded.
    private static func receive(
        _ n: ReceivedNotification, ingest: NotificationIngest, nowMs: Int64, connection: PostgresConnection, logger: Logger
    ) async throws -> NotificationOutcome {
        let claimed = try await connection.query("""
            INSERT INTO app_store_notifications (
                notification_id, version, type, subtype, signed_at, apple_state_at, original_transaction_id, app_account_token,
                environment, source, received_at, outcome)
            VALUES (\(n.id), \(n.version), \(n.type), \(n.subtype), \(n.signedAtMs), \(n.appleStateAtMs), \(n.originalTransactionID),
                \(n.appAccountToken), \(n.environment?.rawValue), \(n.source.rawValue), \(n.receivedAtMs), 'unmatched')
            ON CONFLICT (notification_id) DO UPDATE SET source = EXCLUDED.source, received_at = EXCLUDED.received_at
                WHERE app_store_notifications.outcome = 'unmatched'
            RETURNING notification_id
            """, logger: logger).decode(String.self).collect()
        guard !claimed.isEmpty else { return .duplicate }
        var outcome = NotificationOutcome.unmatched
        let row = try await row(for: n, connection: connection, logger: logger)
        if let row {
            switch ingest.effect(of: n, on: row, nowMs: nowMs) {
            case .settled(let settled):
                outcome = settled
            case .write(let result):
                let (plans, _) = try await BatchWrite(connection: connection, logger: logger, releasing: nil).write([result])
                outcome = NotificationIngest.outcome(of: plans[0])
            }
        } else if n.answer == nil {
            outcome = .ignored
        }
        try await connection.query("""
            UPDATE app_store_notifications SET outcome = \(outcome.rawValue), subscription_id = \(row?.id),
                signed_payload = \(outcome == .unmatched ? n.signedPayload : nil)
            WHERE notification_id = \(n.id)
            """, logger: logger)
        return outcome
    }

    /// The row owning the notification's chain; owning none, the first row without a chain whose
    /// `app_account_token` is the notification's. Locked for the transaction.
    private static func row(for n: ReceivedNotification, connection: PostgresConnection, logger: Logger) async throws -> SubscriptionRow? {
        let columns = RowReader.subscriptionColumns
        if let chain = n.originalTransactionID,
            let owner = try await rows(connection.query(
                "SELECT \(unescaped: columns) FROM subscriptions WHERE original_transaction_id = \(chain) FOR UPDATE", logger: logger),
                { reader in try reader.subscription() }
            ).first
        {
            return owner
        }
        guard let token = n.appAccountToken, n.answer != nil else { return nil }
        return try await rows(connection.query("""
            SELECT \(unescaped: columns) FROM subscriptions
            WHERE app_account_token = \(token) AND original_transaction_id IS NULL ORDER BY id LIMIT 1 FOR UPDATE
            """, logger: logger), { reader in try reader.subscription() }
        ).first
    }

    public func notifications(_ query: NotificationQuery) async throws -> [StoredNotification] {
        try await read { connection, logger in
            try await connection.query("""
                SELECT n.notification_id, n.version, n.type, n.subtype, n.signed_at, n.apple_state_at, n.original_transaction_id,
                    n.app_account_token, n.environment, n.source, n.received_at, n.outcome, n.subscription_id, s.user_id
                FROM app_store_notifications AS n LEFT JOIN subscriptions AS s ON s.id = n.subscription_id
                WHERE (NOT \(query.unmatchedOnly) OR n.outcome = 'unmatched')
                    AND (\(query.sinceMs)::bigint IS NULL OR n.received_at >= \(query.sinceMs))
                    AND (\(query.userID)::text IS NULL OR s.user_id = \(query.userID))
                ORDER BY n.received_at DESC, n.notification_id LIMIT \(query.limit)
                """, logger: logger
            ).decode((String, Int, String, String?, Int64?, Int64, String?, String?, String?, String, Int64, String, Int64?, String?).self).collect()
                .map { r in
                    StoredNotification(
                        id: r.0, version: r.1, type: r.2, subtype: r.3, signedAtMs: r.4, appleStateAtMs: r.5, originalTransactionID: r.6,
                        appAccountToken: r.7, environment: r.8, source: r.9, receivedAtMs: r.10, outcome: r.11, subscriptionID: r.12, userID: r.13)
                }
        }
    }
}
