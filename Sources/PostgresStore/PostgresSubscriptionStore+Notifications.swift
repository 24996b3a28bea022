import Logging
import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
    /// The batch in a handful of statements whatever its size, as ``BatchWrite`` writes a run's:
    /// every notification claimed by one insert (a receiver taking the same id at once waits on the
    /// claim, then finds it a duplicate), the rows owning their chains read and locked by one
    /// select, the results written by ``BatchWrite`` in rounds in which a row appears once (a
    /// later notification of the same row is planned on what the earlier one wrote), and every
    /// outcome recorded by one update.
    public func receive(_ notifications: [ReceivedNotification], ingest: NotificationIngest, nowMs: Int64) async throws -> [NotificationOutcome] {
        guard !notifications.isEmpty else { return [] }
        return try await transaction { connection, logger in
            var outcomes = [NotificationOutcome?](repeating: nil, count: notifications.count)
            var seen: Set<String> = []
            for (index, n) in notifications.enumerated() where !seen.insert(n.id).inserted { outcomes[index] = .duplicate }
            let claimed = try await Self.claim(notifications.indices.filter { outcomes[$0] == nil }.map { notifications[$0] }, connection: connection, logger: logger)
            for index in notifications.indices where outcomes[index] == nil && !claimed.contains(notifications[index].id) { outcomes[index] = .duplicate }

            let fresh = notifications.indices.filter { outcomes[$0] == nil }
            let chains = Array(Set(fresh.compactMap { notifications[$0].originalTransactionID }))
            var owners: [String: SubscriptionRow] = [:]
            for row in try await Self.rows(connection.query(
                "SELECT \(unescaped: RowReader.subscriptionColumns) FROM subscriptions WHERE original_transaction_id = ANY(\(chains)) ORDER BY id FOR UPDATE",
                logger: logger), { reader in try reader.subscription() })
            {
                if let chain = row.state.originalTransactionID { owners[chain] = row }
            }
            var rowIDs = [Int64?](repeating: nil, count: notifications.count)
            var statusAgrees = [Bool?](repeating: nil, count: notifications.count)
            var pending: [(index: Int, result: ResultBatch.Result)] = []
            for index in fresh {
                let n = notifications[index]
                var row = n.originalTransactionID.flatMap { owners[$0] }
                if row == nil, let token = n.appAccountToken, n.answer != nil {
                    row = try await Self.row(withToken: token, connection: connection, logger: logger)
                    // A later notification of the chain in this batch goes to the same row.
                    if let chain = n.originalTransactionID { owners[chain] = row }
                }
                guard let row else {
                    outcomes[index] = n.answer == nil ? .ignored : .unmatched
                    continue
                }
                rowIDs[index] = row.id
                switch ingest.effect(of: n, on: row, nowMs: nowMs) {
                case .settled(let outcome): outcomes[index] = outcome
                case .write(let result): pending.append((index, result))
                }
            }
            while !pending.isEmpty {
                var round: [(index: Int, result: ResultBatch.Result)] = []
                var inRound: Set<Int64> = []
                var later: [(index: Int, result: ResultBatch.Result)] = []
                for entry in pending {
                    if inRound.insert(entry.result.subscriptionID).inserted, later.allSatisfy({ $0.result.subscriptionID != entry.result.subscriptionID }) {
                        round.append(entry)
                    } else {
                        later.append(entry)
                    }
                }
                let (plans, _) = try await BatchWrite(connection: connection, logger: logger, releasing: nil).write(round.map(\.result))
                for (entry, plan) in zip(round, plans) {
                    outcomes[entry.index] = NotificationIngest.outcome(of: plan)
                    statusAgrees[entry.index] = plan.statusAgrees
                }
                pending = later
            }
            let recorded = fresh.map { index in
                let n = notifications[index], outcome = outcomes[index]!
                return """
                    {"id":\(JSONText.quoted(n.id)),"outcome":\(JSONText.quoted(outcome.rawValue)),"subscription_id":\(JSONText.number(rowIDs[index])),\
                    "signed_payload":\(JSONText.quoted(outcome == .unmatched ? n.signedPayload : nil)),\
                    "apple_status":\(JSONText.number(n.answer?.subscriptionStatus?.rawValue)),"status_agrees":\(JSONText.bool(statusAgrees[index]))}
                    """
            }
            if !recorded.isEmpty {
                try await connection.query("""
                    UPDATE app_store_notifications AS n SET outcome = v.outcome, subscription_id = v.subscription_id, signed_payload = v.signed_payload,
                        apple_status = v.apple_status, status_agrees = v.status_agrees::int
                    FROM jsonb_to_recordset(\("[" + recorded.joined(separator: ",") + "]")::jsonb)
                        AS v(id text, outcome text, subscription_id bigint, signed_payload text, apple_status integer, status_agrees boolean)
                    WHERE n.notification_id = v.id
                    """, logger: logger)
            }
            return outcomes.map { $0! }
        }
    }

    /// Inserts the notifications as `unmatched` (their outcome follows in the same transaction);
    /// one recorded before and still unmatched is taken again. Returns the ids claimed.
    private static func claim(_ notifications: [ReceivedNotification], connection: PostgresConnection, logger: Logger) async throws -> Set<String> {
        guard !notifications.isEmpty else { return [] }
        let json = notifications.map { n in
            """
            {"id":\(JSONText.quoted(n.id)),"version":\(n.version),"type":\(JSONText.quoted(n.type)),"subtype":\(JSONText.quoted(n.subtype)),\
            "signed_at":\(JSONText.number(n.signedAtMs)),"apple_state_at":\(n.appleStateAtMs),"chain":\(JSONText.quoted(n.originalTransactionID)),\
            "token":\(JSONText.quoted(n.appAccountToken)),"environment":\(JSONText.quoted(n.environment?.rawValue)),\
            "source":\(JSONText.quoted(n.source.rawValue)),"received_at":\(n.receivedAtMs)}
            """
        }
        let claimed = try await connection.query("""
            INSERT INTO app_store_notifications (
                notification_id, version, type, subtype, signed_at, apple_state_at, original_transaction_id, app_account_token,
                environment, source, received_at, outcome)
            SELECT v.id, v.version, v.type, v.subtype, v.signed_at, v.apple_state_at, v.chain, v.token, v.environment, v.source, v.received_at, 'unmatched'
            FROM jsonb_to_recordset(\("[" + json.joined(separator: ",") + "]")::jsonb) AS v(
                id text, version integer, type text, subtype text, signed_at bigint, apple_state_at bigint, chain text, token text,
                environment text, source text, received_at bigint)
            ON CONFLICT (notification_id) DO UPDATE SET source = EXCLUDED.source, received_at = EXCLUDED.received_at
                WHERE app_store_notifications.outcome = 'unmatched'
            RETURNING notification_id
            """, logger: logger).decode(String.self).collect()
        return Set(claimed)
    }

    /// The first row without a chain whose `app_account_token` is `token`, locked.
    private static func row(withToken token: String, connection: PostgresConnection, logger: Logger) async throws -> SubscriptionRow? {
        try await rows(connection.query("""
            SELECT \(unescaped: RowReader.subscriptionColumns) FROM subscriptions
            WHERE app_account_token = \(token) AND original_transaction_id IS NULL ORDER BY id LIMIT 1 FOR UPDATE
            """, logger: logger), { reader in try reader.subscription() }
        ).first
    }

    public func waitingForAdoption(limit: Int) async throws -> [(id: String, signedPayload: String)] {
        try await read { connection, logger in
            try await connection.query("""
                SELECT n.notification_id, n.signed_payload FROM app_store_notifications AS n
                WHERE n.outcome = 'unmatched' AND n.app_account_token IS NOT NULL AND n.signed_payload IS NOT NULL
                    AND EXISTS (SELECT 1 FROM subscriptions AS s WHERE s.app_account_token = n.app_account_token AND s.original_transaction_id IS NULL)
                ORDER BY n.apple_state_at LIMIT \(limit)
                """, logger: logger).decode((String, String).self).collect().map { (id: $0.0, signedPayload: $0.1) }
        }
    }

    public func historyCheckpoint(_ environment: AppStoreEnvironment) async throws -> Int64? {
        try await read { connection, logger in
            try await connection.query(
                "SELECT through_at FROM notification_history_checkpoints WHERE environment = \(environment.rawValue)", logger: logger
            ).decode(Int64.self).collect().first
        }
    }

    public func setHistoryCheckpoint(_ environment: AppStoreEnvironment, readFromMs: Int64, throughMs: Int64, nowMs: Int64) async throws -> Int64 {
        try await transaction { connection, logger in
            // In SET, the table's columns are the row's values before this update.
            try await connection.query("""
                INSERT INTO notification_history_checkpoints (environment, through_at, updated_at, covered_from)
                VALUES (\(environment.rawValue), \(throughMs), \(nowMs), \(readFromMs))
                ON CONFLICT (environment) DO UPDATE SET
                    covered_from = CASE WHEN EXCLUDED.covered_from <= notification_history_checkpoints.through_at
                        THEN COALESCE(notification_history_checkpoints.covered_from, EXCLUDED.covered_from) ELSE EXCLUDED.covered_from END,
                    through_at = GREATEST(notification_history_checkpoints.through_at, EXCLUDED.through_at), updated_at = EXCLUDED.updated_at
                RETURNING covered_from
                """, logger: logger).decode(Int64.self).collect().first ?? readFromMs
        }
    }

    public func notifications(_ query: NotificationQuery) async throws -> [StoredNotification] {
        try await read { connection, logger in
            try await connection.query("""
                SELECT n.notification_id, n.version, n.type, n.subtype, n.signed_at, n.apple_state_at, n.original_transaction_id,
                    n.app_account_token, n.environment, n.source, n.received_at, n.outcome, n.subscription_id, s.user_id, n.apple_status,
                    n.status_agrees::integer
                FROM app_store_notifications AS n LEFT JOIN subscriptions AS s ON s.id = n.subscription_id
                WHERE (NOT \(query.unmatchedOnly) OR n.outcome = 'unmatched')
                    AND (\(query.sinceMs)::bigint IS NULL OR n.received_at >= \(query.sinceMs))
                    AND (\(query.userID)::text IS NULL OR s.user_id = \(query.userID))
                ORDER BY n.received_at DESC, n.notification_id LIMIT \(query.limit)
                """, logger: logger
            ).decode((String, Int, String, String?, Int64?, Int64, String?, String?, String?, String, Int64, String, Int64?, String?, Int?, Int?).self).collect()
                .map { r in
                    StoredNotification(
                        id: r.0, version: r.1, type: r.2, subtype: r.3, signedAtMs: r.4, appleStateAtMs: r.5, originalTransactionID: r.6,
                        appAccountToken: r.7, environment: r.8, source: r.9, receivedAtMs: r.10, outcome: r.11, subscriptionID: r.12, userID: r.13,
                        appleStatus: r.14, statusAgrees: r.15.map { $0 == 1 })
                }
        }
    }
}
