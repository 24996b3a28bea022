import Logging
import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
    /// The batch in a handful of statements whatever its size, as ``PlanWriter`` writes a run's:
    /// every notification claimed by one insert (a receiver taking the same id at once waits on the
    /// claim, then finds it a duplicate), the rows owning their chains read and locked by one
    /// select, the results written by ``PlanWriter`` in rounds in which a row appears once (a
    /// later notification of the same row is planned on what the earlier one wrote), every
    /// outcome recorded by one update and the changes' outbound events added last (``OutboxSQL``);
    /// consumption requests are queued before the writes (``ConsumptionQueue``).
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
                "SELECT \(unescaped: SubscriptionRowSQL.columns) FROM subscriptions WHERE original_transaction_id = ANY(\(chains)) ORDER BY id FOR UPDATE",
                logger: logger), { reader in try SubscriptionRowSQL.row(&reader) })
            {
                if let chain = row.state.originalTransactionID { owners[chain] = row }
            }
            var rowIDs = [Int64?](repeating: nil, count: notifications.count)
            var consumption: [SQLStatement] = []
            var statusAgrees = [Bool?](repeating: nil, count: notifications.count)
            var pending: [(index: Int, result: ResultBatch.Result)] = []
            // Chainless rows a notification of this batch adopts, and for which chain: a row adopts
            // one chain, so a second chain of the same token finds none and waits for its own row,
            // as it would after the first was written (the rows are all read before any write).
            var adopted: [Int64: String] = [:]
            for index in fresh {
                let n = notifications[index]
                let row = try await NotificationMatch.row(for: n) { lookup in
                    switch lookup {
                    case .chain(let chain): return owners[chain]
                    case .token(let token):
                        let row = try await connection.rows(
                            NotificationsSQL.adoptable(token: token, columns: SubscriptionRowSQL.columns, lock: true), logger: logger
                        ) { reader in try SubscriptionRowSQL.row(&reader) }.first
                        if let row, let holder = adopted[row.id], holder != n.originalTransactionID { return nil }
                        // A later notification of the chain in this batch goes to the same row.
                        if let chain = n.originalTransactionID { owners[chain] = row }
                        return row
                    }
                }
                consumption += ConsumptionQueue.statements(for: n, row: row)
                guard let row else {
                    outcomes[index] = NotificationMatch.outcomeWithoutRow(n)
                    continue
                }
                rowIDs[index] = row.id
                switch ingest.effect(of: n, on: row, nowMs: nowMs) {
                case .settled(let outcome): outcomes[index] = outcome
                case .write(let result):
                    pending.append((index, result))
                    if row.state.originalTransactionID == nil, let chain = n.originalTransactionID { adopted[row.id] = chain }
                }
            }
            // Consumption requests queued (and decisions recorded) with the rows as they stood,
            // before the notifications' confirmations clear a failure standing on them.
            for statement in consumption { try await connection.execute(statement, logger: logger) }
            var writer = PlanWriter(session: PostgresSession(connection: connection, logger: logger), dialect: .postgres, leases: true, releasing: nil)
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
                let (plans, _) = try await writer.write(round.map(\.result))
                for (entry, plan) in zip(round, plans) {
                    outcomes[entry.index] = NotificationIngest.outcome(of: plan)
                    statusAgrees[entry.index] = plan.statusAgrees
                }
                pending = later
            }
            let recorded = fresh.map { index in
                let s = NotificationsSQL.Settlement(
                    notifications[index], outcome: outcomes[index]!, subscriptionID: rowIDs[index], statusAgrees: statusAgrees[index])
                return """
                    {"id":\(JSONText.quoted(s.id)),"outcome":\(JSONText.quoted(s.outcome.rawValue)),"subscription_id":\(JSONText.number(s.subscriptionID)),\
                    "signed_payload":\(JSONText.quoted(s.signedPayload)),"apple_status":\(JSONText.number(s.appleStatus)),\
                    "status_agrees":\(JSONText.bool(s.statusAgrees))}
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
            try await writer.writeOutbox()
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
            INSERT INTO app_store_notifications (\(unescaped: NotificationsSQL.claimColumns))
            SELECT v.id, v.version, v.type, v.subtype, v.signed_at, v.apple_state_at, v.chain, v.token, v.environment, v.source, v.received_at, 'unmatched'
            FROM jsonb_to_recordset(\("[" + json.joined(separator: ",") + "]")::jsonb) AS v(
                id text, version integer, type text, subtype text, signed_at bigint, apple_state_at bigint, chain text, token text,
                environment text, source text, received_at bigint)
            \(unescaped: NotificationsSQL.claimConflict)
            RETURNING notification_id
            """, logger: logger).decode(String.self).collect()
        return Set(claimed)
    }
}
