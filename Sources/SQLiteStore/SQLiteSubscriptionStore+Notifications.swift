import Foundation
import GRDB
import StatusPolling

extension SQLiteSubscriptionStore {
    public func receive(_ notifications: [ReceivedNotification], ingest: NotificationIngest, nowMs: Int64) async throws -> [NotificationOutcome] {
        guard !notifications.isEmpty else { return [] }
        do {
            return try await pool.write { db in try notifications.map { try Self.receive(db, $0, ingest: ingest, nowMs: nowMs) } }
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path, writing: true)
        }
    }

    /// One notification inside the batch's transaction: claimed by its id first (a duplicate stops
    /// there), then applied to its row through the row update plan, then its outcome recorded.
    private static func receive(_ db: Database, _ n: ReceivedNotification, ingest: NotificationIngest, nowMs: Int64) throws -> NotificationOutcome {
        try db.cachedStatement(sql: """
            INSERT INTO app_store_notifications (
                notification_id, version, type, subtype, signed_at, apple_state_at, original_transaction_id, app_account_token,
                environment, source, received_at, outcome)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'unmatched')
            ON CONFLICT (notification_id) DO UPDATE SET source = excluded.source, received_at = excluded.received_at
                WHERE app_store_notifications.outcome = 'unmatched'
            """).execute(arguments: [
                n.id, n.version, n.type, n.subtype, n.signedAtMs, n.appleStateAtMs, n.originalTransactionID, n.appAccountToken,
                n.environment?.rawValue, n.source.rawValue, n.receivedAtMs,
            ])
        guard db.changesCount > 0 else { return .duplicate }
        var outcome = NotificationOutcome.unmatched
        var statusAgrees: Bool?
        let row = try row(db, for: n)
        if let row {
            switch ingest.effect(of: n, on: row, nowMs: nowMs) {
            case .settled(let settled): outcome = settled
            case .write(let result):
                let plan = try applyResult(db, result)
                outcome = NotificationIngest.outcome(of: plan)
                statusAgrees = plan.statusAgrees
            }
        } else if n.answer == nil {
            outcome = .ignored
        }
        try db.cachedStatement(sql: """
            UPDATE app_store_notifications SET outcome = ?, subscription_id = ?, signed_payload = ?, apple_status = ?, status_agrees = ?
            WHERE notification_id = ?
            """).execute(arguments: [
                outcome.rawValue, row?.id, outcome == .unmatched ? n.signedPayload : nil, n.answer?.subscriptionStatus?.rawValue, statusAgrees, n.id,
            ])
        return outcome
    }

    /// The row owning the notification's chain; owning none, the first row without a chain whose
    /// `app_account_token` is the notification's.
    private static func row(_ db: Database, for n: ReceivedNotification) throws -> SubscriptionRow? {
        if let chain = n.originalTransactionID,
            let owner = try SubscriptionRecord.fetchOne(
                db.cachedStatement(sql: "SELECT \(SubscriptionRecord.columnList) FROM subscriptions WHERE original_transaction_id = ?"), arguments: [chain])
        {
            return owner.row
        }
        guard let token = n.appAccountToken, n.answer != nil else { return nil }
        return try SubscriptionRecord.fetchOne(
            db.cachedStatement(sql: """
                SELECT \(SubscriptionRecord.columnList) FROM subscriptions
                WHERE app_account_token = ? AND original_transaction_id IS NULL ORDER BY id LIMIT 1
                """), arguments: [token]
        )?.row
    }

    public func waitingForAdoption(limit: Int) async throws -> [(id: String, signedPayload: String)] {
        do {
            return try await pool.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT n.notification_id, n.signed_payload FROM app_store_notifications AS n
                    WHERE n.outcome = 'unmatched' AND n.app_account_token IS NOT NULL AND n.signed_payload IS NOT NULL
                        AND EXISTS (SELECT 1 FROM subscriptions AS s WHERE s.app_account_token = n.app_account_token AND s.original_transaction_id IS NULL)
                    ORDER BY n.apple_state_at LIMIT ?
                    """, arguments: [limit]).map { (id: $0[0], signedPayload: $0[1]) }
            }
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path)
        }
    }

    public func historyCheckpoint(_ environment: AppStoreEnvironment) async throws -> Int64? {
        do {
            return try await pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT through_at FROM notification_history_checkpoints WHERE environment = ?", arguments: [environment.rawValue])
            }
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path)
        }
    }

    public func setHistoryCheckpoint(_ environment: AppStoreEnvironment, readFromMs: Int64, throughMs: Int64, nowMs: Int64) async throws -> Int64 {
        do {
            return try await pool.write { db in
                // In SET, `through_at` and `covered_from` are the row's values before this update.
                try Int64.fetchOne(db, sql: """
                    INSERT INTO notification_history_checkpoints (environment, through_at, updated_at, covered_from) VALUES (?, ?, ?, ?)
                    ON CONFLICT (environment) DO UPDATE SET
                        covered_from = CASE WHEN excluded.covered_from <= through_at THEN coalesce(covered_from, excluded.covered_from) ELSE excluded.covered_from END,
                        through_at = max(through_at, excluded.through_at), updated_at = excluded.updated_at
                    RETURNING covered_from
                    """, arguments: [environment.rawValue, throughMs, nowMs, readFromMs]) ?? readFromMs
            }
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path, writing: true)
        }
    }

    public func notifications(_ query: NotificationQuery) async throws -> [StoredNotification] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if query.unmatchedOnly { conditions.append("n.outcome = 'unmatched'") }
        if let since = query.sinceMs {
            conditions.append("n.received_at >= ?")
            _ = arguments.append(contentsOf: [since])
        }
        if let user = query.userID {
            conditions.append("s.user_id = ?")
            _ = arguments.append(contentsOf: [user])
        }
        _ = arguments.append(contentsOf: [query.limit])
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = """
            SELECT n.notification_id, n.version, n.type, n.subtype, n.signed_at, n.apple_state_at, n.original_transaction_id,
                n.app_account_token, n.environment, n.source, n.received_at, n.outcome, n.subscription_id, s.user_id, n.apple_status, n.status_agrees
            FROM app_store_notifications AS n LEFT JOIN subscriptions AS s ON s.id = n.subscription_id
            \(filter) ORDER BY n.received_at DESC, n.notification_id LIMIT ?
            """
        let bound = arguments
        do {
            return try await pool.read { db in
                try Row.fetchAll(db, sql: sql, arguments: bound).map { r in
                    StoredNotification(
                        id: r[0], version: r[1], type: r[2], subtype: r[3], signedAtMs: r[4], appleStateAtMs: r[5], originalTransactionID: r[6],
                        appAccountToken: r[7], environment: r[8], source: r[9], receivedAtMs: r[10], outcome: r[11], subscriptionID: r[12], userID: r[13],
                        appleStatus: r[14], statusAgrees: r[15])
                }
            }
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path)
        }
    }
}
