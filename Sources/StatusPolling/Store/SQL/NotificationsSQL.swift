import EntitlementCore

/// The SQL of `app_store_notifications` and `notification_history_checkpoints` that both stores
/// run as written, with the mapping of its rows beside it. A batch's claims and settlements are
/// one statement on PostgreSQL (`jsonb_to_recordset`: one value bound, whatever the batch's size)
/// and a statement compiled once per connection, run per notification, on SQLite.
public enum NotificationsSQL {
    /// The columns a claim inserts, in the order of its values.
    private static let claimColumns = """
        notification_id, version, type, subtype, signed_at, apple_state_at, original_transaction_id, app_account_token,
        environment, source, received_at, outcome
        """

    /// A claim of an id recorded before: taken again only while it is unmatched (a later delivery,
    /// or a row enrolled since, may place it); otherwise the insert changes nothing, a duplicate.
    private static let claimConflict = """
        ON CONFLICT (notification_id) DO UPDATE SET source = excluded.source, received_at = excluded.received_at
            WHERE app_store_notifications.outcome = 'unmatched'
        """

    /// Records `notifications` as `unmatched` (their outcomes follow in the same transaction); each
    /// statement returns the ids it claimed — a duplicate's is not among them.
    static func claim(_ dialect: SQLDialect, _ notifications: [ReceivedNotification]) -> [SQLStatement] {
        guard !notifications.isEmpty else { return [] }
        switch dialect {
        case .sqlite:
            return notifications.map { n in
                SQLStatement(sqlite: claimSQLite, [
                    .init(n.id), .init(n.version), .init(n.type), .init(n.subtype), .init(n.signedAtMs), .init(n.appleStateAtMs),
                    .init(n.originalTransactionID), .init(n.appAccountToken), .init(n.environment?.rawValue), .init(n.source.rawValue),
                    .init(n.receivedAtMs),
                ])
            }
        case .postgres:
            let json = notifications.map { n in
                """
                {"id":\(JSONText.quoted(n.id)),"version":\(n.version),"type":\(JSONText.quoted(n.type)),"subtype":\(JSONText.quoted(n.subtype)),\
                "signed_at":\(JSONText.number(n.signedAtMs)),"apple_state_at":\(n.appleStateAtMs),"chain":\(JSONText.quoted(n.originalTransactionID)),\
                "token":\(JSONText.quoted(n.appAccountToken)),"environment":\(JSONText.quoted(n.environment?.rawValue)),\
                "source":\(JSONText.quoted(n.source.rawValue)),"received_at":\(n.receivedAtMs)}
                """
            }
            return ["""
                INSERT INTO app_store_notifications (\(unescaped: claimColumns))
                SELECT v.id, v.version, v.type, v.subtype, v.signed_at, v.apple_state_at, v.chain, v.token, v.environment, v.source, v.received_at, 'unmatched'
                FROM jsonb_to_recordset(\("[" + json.joined(separator: ",") + "]")::jsonb) AS v(
                    id text, version integer, type text, subtype text, signed_at bigint, apple_state_at bigint, chain text, token text,
                    environment text, source text, received_at bigint)
                \(unescaped: claimConflict)
                RETURNING notification_id
                """]
        }
    }

    /// SQLite's claim of one notification, compiled once per connection (a receiver's statement).
    private static let claimSQLite = """
        INSERT INTO app_store_notifications (\(claimColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'unmatched')
        \(claimConflict) RETURNING notification_id
        """

    /// What a claimed notification came to, as its row records it.
    public struct Settlement: Sendable, Equatable {
        public var id: String
        public var outcome: NotificationOutcome
        public var subscriptionID: Int64?
        /// Kept only while unmatched, for a row enrolled later to verify again; personal data.
        public var signedPayload: String?
        public var appleStatus: Int?
        public var statusAgrees: Bool?

        public init(_ n: ReceivedNotification, outcome: NotificationOutcome, subscriptionID: Int64?, statusAgrees: Bool?) {
            id = n.id
            self.outcome = outcome
            self.subscriptionID = subscriptionID
            signedPayload = outcome == .unmatched ? n.signedPayload : nil
            appleStatus = n.answer?.subscriptionStatus?.rawValue
            self.statusAgrees = statusAgrees
        }
    }

    /// Records `settlements` on the notifications' claimed rows.
    static func settle(_ dialect: SQLDialect, _ settlements: [Settlement]) -> [SQLStatement] {
        guard !settlements.isEmpty else { return [] }
        switch dialect {
        case .sqlite:
            return settlements.map { s in
                SQLStatement(sqlite: settleSQLite, [
                    .init(s.outcome.rawValue), .init(s.subscriptionID), .init(s.signedPayload), .init(s.appleStatus),
                    .init(s.statusAgrees), .init(s.id),
                ])
            }
        case .postgres:
            let json = settlements.map { s in
                """
                {"id":\(JSONText.quoted(s.id)),"outcome":\(JSONText.quoted(s.outcome.rawValue)),"subscription_id":\(JSONText.number(s.subscriptionID)),\
                "signed_payload":\(JSONText.quoted(s.signedPayload)),"apple_status":\(JSONText.number(s.appleStatus)),\
                "status_agrees":\(JSONText.bool(s.statusAgrees))}
                """
            }
            return ["""
                UPDATE app_store_notifications AS n SET outcome = v.outcome, subscription_id = v.subscription_id, signed_payload = v.signed_payload,
                    apple_status = v.apple_status, status_agrees = v.status_agrees::int
                FROM jsonb_to_recordset(\("[" + json.joined(separator: ",") + "]")::jsonb)
                    AS v(id text, outcome text, subscription_id bigint, signed_payload text, apple_status integer, status_agrees boolean)
                WHERE n.notification_id = v.id
                """]
        }
    }

    private static let settleSQLite = """
        UPDATE app_store_notifications SET outcome = ?, subscription_id = ?, signed_payload = ?, apple_status = ?, status_agrees = ?
        WHERE notification_id = ?
        """

    /// The rows owning `chains` (``NotificationMatch/chain(_:)``), read by ``SubscriptionRowSQL/row(_:)``:
    /// PostgreSQL's in one statement, locked in `id` order; SQLite's a compiled statement each (its
    /// write transaction holds the whole database).
    static func owners(of chains: [String], _ dialect: SQLDialect) -> [SQLStatement] {
        switch dialect {
        case .sqlite:
            return chains.map { SQLStatement(sqlite: ownerSQLite, [.text($0)]) }
        case .postgres:
            return ["""
                SELECT \(unescaped: SubscriptionRowSQL.columns) FROM subscriptions WHERE original_transaction_id IN (\(list: chains))
                ORDER BY id FOR UPDATE
                """]
        }
    }

    private static let ownerSQLite = "SELECT \(SubscriptionRowSQL.columns) FROM subscriptions WHERE original_transaction_id = ?"

    /// The first row without a chain whose `app_account_token` is `token` (``NotificationMatch/token(_:)``),
    /// read by ``SubscriptionRowSQL/row(_:)``; PostgreSQL's locked.
    static func adoptable(token: String, _ dialect: SQLDialect) -> SQLStatement {
        """
        SELECT \(unescaped: SubscriptionRowSQL.columns) FROM subscriptions
        WHERE app_account_token = \(token) AND original_transaction_id IS NULL ORDER BY id LIMIT 1\(unescaped: dialect == .postgres ? " FOR UPDATE" : "")
        """
    }

    /// Unmatched notifications a row now links by its `app_account_token`, oldest first, read by
    /// ``waiting(_:)``.
    public static func waitingForAdoption(limit: Int) -> SQLStatement {
        """
        SELECT n.notification_id, n.signed_payload FROM app_store_notifications AS n
        WHERE n.outcome = 'unmatched' AND n.app_account_token IS NOT NULL AND n.signed_payload IS NOT NULL
            AND EXISTS (SELECT 1 FROM subscriptions AS s WHERE s.app_account_token = n.app_account_token AND s.original_transaction_id IS NULL)
        ORDER BY n.apple_state_at LIMIT \(limit)
        """
    }

    /// A row of ``waitingForAdoption(limit:)``.
    @inlinable
    public static func waiting(_ row: inout some ColumnReader) throws -> (id: String, signedPayload: String) {
        (id: try row.column(), signedPayload: try row.column())
    }

    /// Up to when the history of `environment` has been read (`through_at`).
    public static func historyCheckpoint(_ environment: AppStoreEnvironment) -> SQLStatement {
        "SELECT through_at FROM notification_history_checkpoints WHERE environment = \(environment.rawValue)"
    }

    /// Moves the checkpoint of `environment` on and returns `covered_from`: kept while this reading
    /// starts no later than the last one ended, else restarted here. In SET, `c` is the row as it
    /// was before this update.
    public static func setHistoryCheckpoint(
        _ dialect: SQLDialect, _ environment: AppStoreEnvironment, readFromMs: Int64, throughMs: Int64, nowMs: Int64
    ) -> SQLStatement {
        """
        INSERT INTO notification_history_checkpoints AS c (environment, through_at, updated_at, covered_from)
        VALUES (\(environment.rawValue), \(throughMs), \(nowMs), \(readFromMs))
        ON CONFLICT (environment) DO UPDATE SET
            covered_from = CASE WHEN excluded.covered_from <= c.through_at THEN coalesce(c.covered_from, excluded.covered_from) ELSE excluded.covered_from END,
            through_at = \(dialect.greatest("c.through_at", "excluded.through_at")), updated_at = excluded.updated_at
        RETURNING covered_from
        """
    }

    /// The recorded notifications `query` asks for, newest first, read by ``stored(_:)``.
    public static func list(_ query: NotificationQuery) -> SQLStatement {
        var conditions: [SQLStatement] = []
        if query.unmatchedOnly { conditions.append("n.outcome = 'unmatched'") }
        if let since = query.sinceMs { conditions.append("n.received_at >= \(since)") }
        if let user = query.userID { conditions.append("s.user_id = \(user)") }
        return """
            SELECT n.notification_id, n.version, n.type, n.subtype, n.signed_at, n.apple_state_at, n.original_transaction_id,
                n.app_account_token, n.environment, n.source, n.received_at, n.outcome, n.subscription_id, s.user_id, n.apple_status, n.status_agrees
            FROM app_store_notifications AS n LEFT JOIN subscriptions AS s ON s.id = n.subscription_id
            \(SQLStatement(where: conditions)) ORDER BY n.received_at DESC, n.notification_id LIMIT \(query.limit)
            """
    }

    /// A row of ``list(_:)``.
    @inlinable
    public static func stored(_ row: inout some ColumnReader) throws -> StoredNotification {
        StoredNotification(
            id: try row.column(), version: try row.column(), type: try row.column(), subtype: try row.column(), signedAtMs: try row.column(),
            appleStateAtMs: try row.column(), originalTransactionID: try row.column(), appAccountToken: try row.column(),
            environment: try row.column(), source: try row.column(), receivedAtMs: try row.column(), outcome: try row.column(),
            subscriptionID: try row.column(), userID: try row.column(), appleStatus: try row.column(), statusAgrees: try row.column())
    }
}
