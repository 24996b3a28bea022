import EntitlementCore

/// The SQL that writes a batch's plans (``PlanWriter``): the rows read and locked, the chains'
/// owners, then the rows, the audit trail and the outbox written — SQLite's a statement per row
/// (each text made once, where an interpolated statement would be built again for every row; the
/// connection keeps it compiled), PostgreSQL's one statement per kind for the whole batch from a
/// JSON array (`jsonb_to_recordset`: a statement per row cost a round trip each and most of a
/// worker's CPU).
enum PlanWriteSQL {
    // MARK: Reading

    /// The rows a batch writes, in id order (locked in that order on PostgreSQL, as every writer
    /// locks, so two workers' batches cannot deadlock), read by ``locked(_:)``. `leases`: the
    /// table holds leases (shared work).
    static func lockedRows(_ dialect: SQLDialect, ids: [Int64], leases: Bool) -> SQLStatement {
        """
        SELECT id, user_id, latest_receipt, \(unescaped: leases ? "lease_run" : "NULL"), apple_state_at, transaction_signed_at, \
        \(unescaped: ContractColumn.list)
        FROM subscriptions WHERE id IN (\(list: ids)) ORDER BY id\(unescaped: dialect == .postgres ? " FOR UPDATE" : "")
        """
    }

    /// One row, as ``lockedRows(_:ids:leases:)`` reads it, for SQLite: a text made once, kept
    /// compiled (a batch's list of ids is another text each time, compiled again).
    static func lockedRow(_ id: Int64) -> SQLStatement {
        SQLStatement(sqlite: lockedRowSQLite, [.integer(id)])
    }

    private static let lockedRowSQLite = """
        SELECT id, user_id, latest_receipt, NULL, apple_state_at, transaction_signed_at, \(ContractColumn.list) FROM subscriptions WHERE id = ?
        """

    /// The row that owns one chain, read as (chain, id), for SQLite: as ``lockedRow(_:)``.
    static func owner(of chain: String) -> SQLStatement {
        SQLStatement(sqlite: "SELECT original_transaction_id, id FROM subscriptions WHERE original_transaction_id = ?", [.text(chain)])
    }

    /// A row of ``lockedRows(_:ids:leases:)``: its id, and the row as the planner takes it, holding
    /// the receipt sent for it (`sent`; nothing sent: a notification's answer) or not.
    static func locked(_ row: inout some ColumnReader, sent: (Int64) -> String?) throws -> (id: Int64, row: RowUpdatePlan.LockedRow) {
        let id: Int64 = try row.column(), userID: String = try row.column(), receipt = sent(id)
        let holdsReceiptSent = try row.text(equals: receipt ?? "") || receipt == nil
        let leaseRun: Int64? = try row.column(), appleStateAt: Int64? = try row.column(), transactionAsOf: Int64? = try row.column()
        let locked = RowUpdatePlan.LockedRow(
            userID: userID, holdsReceiptSent: holdsReceiptSent, state: try SubscriptionRowSQL.state(&row), appleStateAtMs: appleStateAt,
            leaseRun: leaseRun, transactionAsOfMs: transactionAsOf)
        return (id, locked)
    }

    /// The rows that own these chains, read as (chain, id).
    static func owners(of chains: [String]) -> SQLStatement {
        "SELECT original_transaction_id, id FROM subscriptions WHERE original_transaction_id IN (\(list: chains))"
    }

    // MARK: SQLite, a row at a time

    /// A verified row's columns, in the order of ``verified(_:plan:state:latestReceipt:status:appleStateAtMs:)``.
    private static let verifiedSQLite = """
        UPDATE subscriptions SET \(ContractColumn.allCases.map { "\($0.rawValue) = ?" }.joined(separator: ", ")),
            transaction_signed_at = ?, latest_receipt = COALESCE(?, latest_receipt), apple_state_at = ?,
            last_attempt_at = ?, last_verified_at = ?, last_apple_status = ?, last_status_backend = ?,
            last_error_reason = NULL, last_error = NULL, consecutive_failures = 0,
            receipt_uploaded = max(receipt_uploaded * ?, ?)
        WHERE id = ?
        """

    static func verified(
        _ id: Int64, plan: RowUpdatePlan, state: SubscriptionState, latestReceipt: String?, status: UpstreamStatus, appleStateAtMs: Int64
    ) -> SQLStatement {
        var values = contractValues(state)
        values += [
            .init(plan.transactionAsOfMs), .init(latestReceipt), .init(appleStateAtMs), .init(plan.atMs), .init(plan.atMs), .init(status.code),
            .init(status.backend.rawValue), .init(plan.keepsUploadedReceiptDue), .init(plan.asksApple), .init(id),
        ]
        return SQLStatement(sqlite: verifiedSQLite, values)
    }

    /// Bookkeeping only: the contract columns are deliberately absent from this statement.
    private static let failureSQLite = """
        UPDATE subscriptions SET
            last_attempt_at = ?, last_apple_status = ?, last_status_backend = ?, last_error_reason = ?, last_error = ?,
            consecutive_failures = consecutive_failures + 1
        WHERE id = ?
        """

    static func failure(_ id: Int64, _ failure: VerificationFailure, atMs: Int64) -> SQLStatement {
        SQLStatement(sqlite: failureSQLite, [
            .init(atMs), .init(failure.upstreamStatus?.code), .init(failure.upstreamStatus?.backend.rawValue), .init(failure.reason.rawValue),
            .init(failure.detail), .init(id),
        ])
    }

    private static let auditSQLite = """
        INSERT INTO subscription_events (subscription_id, user_id, run_id, at, reason, apple_status, status_backend,
            entitlement_before, entitlement_after, old_values, new_values, source, notification_id, transaction_id, revoked_at, apple_state_at,
            \(reportColumnList))
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \(Array(repeating: "?", count: SubscriptionEventsSQL.reportColumns.count).joined(separator: ", ")))
        RETURNING id
        """

    /// The audit row's report columns (``SubscriptionEventsSQL/reportColumns``) by name.
    private static let reportColumnList = SubscriptionEventsSQL.reportColumns.map(\.name).joined(separator: ", ")

    /// One audit row: who, when, which run, why, which backend answered with which status, before
    /// and after; its id.
    static func audit(_ row: AuditRow) -> SQLStatement {
        let plan = row.plan, event = row.event, ms = plan.atMs
        return SQLStatement(sqlite: auditSQLite, [
            .init(row.subscriptionID), .init(row.userID), .init(plan.runID), .init(ms), .init(event.reason.rawValue), .init(plan.upstreamStatus?.code),
            .init(plan.upstreamStatus?.backend.rawValue), .init(event.old.entitlement(at: ms).rawValue), .init(event.new.entitlement(at: ms).rawValue),
            .init(event.old.auditJSON), .init(event.new.auditJSON), .init(plan.provenance.source), .init(plan.provenance.notificationID),
            .init(event.transactionID), .init(event.revokedAtMs), .init(plan.provenance.notifiedAtMs),
        ] + SubscriptionEventsSQL.reportValues(old: event.old, new: event.new).map(SQLValue.init))
    }

    /// One outbox row beside its audit row.
    static func outbound(_ e: OutboundEvent) -> SQLStatement {
        SQLStatement(sqlite: OutboxSQL.insertSQLite, [
            .init(e.eventID), .init(e.kind.rawValue), .init(e.userID), .init(e.subscriptionID), .init(e.auditEventID), .init(e.source),
            .init(e.appleAtMs), .init(e.atMs), .init(e.body),
        ])
    }

    // MARK: Either dialect

    /// Another subscription of a new row's receipt that no row owns: enrolled as a verified row
    /// of the same user, so the web service and `show` see it; its id.
    static func enrollDiscovered(_ state: SubscriptionState, userID: String, plan: RowUpdatePlan) -> SQLStatement {
        let values = ContractColumn.allCases.map { column -> SQLStatement in
            "CAST(\(SQLValue(column.value(in: state))) AS \(unescaped: column.kind.postgresType))"
        }
        return """
            INSERT INTO subscriptions (user_id, latest_receipt, \(unescaped: ContractColumn.list),
                transaction_signed_at, apple_state_at, last_attempt_at, last_verified_at, last_apple_status, last_status_backend)
            VALUES (\(userID), \(plan.discoveredReceipt), \(joined: values), \(plan.appleStateAtMs), \(plan.appleStateAtMs), \(plan.atMs), \(plan.atMs),
                CAST(\(plan.upstreamStatus?.code) AS integer), \(plan.upstreamStatus?.backend.rawValue))
            RETURNING id
            """
    }

    /// Moves run `runID`'s checkpoint forward (never back).
    static func checkpoint(_ dialect: SQLDialect, runID: Int64, through: Int64) -> SQLStatement {
        "UPDATE poll_runs SET checkpoint_id = \(dialect.greatest("checkpoint_id", "\(through)")) WHERE id = \(runID)"
    }

    // MARK: PostgreSQL, a batch at a time

    /// The verified rows (``verifiedJSON``), each giving up `releasing`'s lease in the same statement.
    static func verifiedSet(_ rows: [String], releasing: Int64?) -> SQLStatement {
        """
        UPDATE subscriptions AS s SET
            \(unescaped: contractAssignments), transaction_signed_at = v.transaction_signed_at,
            latest_receipt = COALESCE(v.latest_receipt, s.latest_receipt), apple_state_at = v.apple_state_at,
            last_attempt_at = v.at, last_verified_at = v.at, last_apple_status = v.apple_status, last_status_backend = v.backend,
            last_error_reason = NULL, last_error = NULL, consecutive_failures = 0,
            receipt_uploaded = CASE WHEN v.asks_apple THEN 1 WHEN v.keeps_upload THEN s.receipt_uploaded ELSE 0 END,
            \(releasingLeases(releasing))
        FROM jsonb_to_recordset(\("[" + rows.joined(separator: ",") + "]")::jsonb) AS v(
            id bigint, \(unescaped: contractTypes), transaction_signed_at bigint,
            latest_receipt text, apple_state_at bigint, at bigint, apple_status integer, backend text,
            keeps_upload boolean, asks_apple boolean)
        WHERE s.id = v.id
        """
    }

    /// The failures (``failureJSON``): bookkeeping only, the contract columns deliberately absent.
    static func failureSet(_ rows: [String], releasing: Int64?) -> SQLStatement {
        """
        UPDATE subscriptions AS s SET
            last_attempt_at = v.at, last_apple_status = v.apple_status, last_status_backend = v.backend,
            last_error_reason = v.reason, last_error = v.detail, consecutive_failures = s.consecutive_failures + 1,
            \(releasingLeases(releasing))
        FROM jsonb_to_recordset(\("[" + rows.joined(separator: ",") + "]")::jsonb) AS v(
            id bigint, at bigint, apple_status integer, backend text, reason text, detail text)
        WHERE s.id = v.id
        """
    }

    /// The rows of run `releasing` give their leases up in the statement that writes their results.
    private static func releasingLeases(_ releasing: Int64?) -> SQLStatement {
        """
        lease_owner = CASE WHEN s.lease_run = \(releasing) THEN NULL ELSE s.lease_owner END,
            lease_expires_at = CASE WHEN s.lease_run = \(releasing) THEN NULL ELSE s.lease_expires_at END,
            lease_run = CASE WHEN s.lease_run = \(releasing) THEN NULL ELSE s.lease_run END
        """
    }

    /// `count` ids of the trail's sequence, taken first so that each change's outbound event
    /// names its audit row.
    static func auditIDs(_ count: Int) -> SQLStatement {
        "SELECT nextval(pg_get_serial_sequence('subscription_events', 'id')) FROM generate_series(1, \(count))"
    }

    /// The audit rows (``auditJSON(_:id:)``), in order.
    static func auditSet(_ rows: [String]) -> SQLStatement {
        """
        INSERT INTO subscription_events (id, subscription_id, user_id, run_id, at, reason, apple_status, status_backend,
            entitlement_before, entitlement_after, old_values, new_values, source, notification_id, transaction_id, revoked_at, apple_state_at,
            \(unescaped: reportColumnList))
        SELECT v.id, v.subscription_id, v.user_id, v.run_id, v.at, v.reason, v.apple_status, v.backend, v.before, v.after, v.old_values, v.new_values,
            v.source, v.notification_id, v.transaction_id, v.revoked_at, v.apple_state_at, \(unescaped: reportColumnValues)
        FROM jsonb_array_elements(\("[" + rows.joined(separator: ",") + "]")::jsonb) WITH ORDINALITY AS e(row, n),
            jsonb_to_record(e.row) AS v(
                id bigint, subscription_id bigint, user_id text, run_id bigint, at bigint, reason text, apple_status integer, backend text,
                before text, after text, old_values text, new_values text, source text, notification_id text, transaction_id text, revoked_at bigint,
                apple_state_at bigint, \(unescaped: reportColumnTypes))
        ORDER BY e.n
        """
    }

    /// Marks the rows written done in run `runID`'s shared work and gives up the leases a
    /// superseded receipt's row (written nothing) still holds.
    static func doneInSharedWork(runID: Int64, written: [Int64]) -> [SQLStatement] {
        [
            """
            UPDATE work_targets SET done = true
            WHERE work_id = (SELECT work_id FROM poll_runs WHERE id = \(runID)) AND subscription_id IN (\(list: written)) AND NOT done
            """,
            WorkSharingSQL.releaseLeases(of: runID, ids: written),
        ]
    }

    static func verifiedJSON(_ id: Int64, plan: RowUpdatePlan, state s: SubscriptionState, latestReceipt: String?, status: UpstreamStatus, appleStateAtMs: Int64) -> String {
        """
        {"id":\(id),\(s.columnsJSON),"transaction_signed_at":\(JSONText.number(plan.transactionAsOfMs)),\
        "latest_receipt":\(JSONText.quoted(latestReceipt)),"apple_state_at":\(appleStateAtMs),"at":\(plan.atMs),"apple_status":\(status.code),\
        "backend":\(JSONText.quoted(status.backend.rawValue)),"keeps_upload":\(plan.keepsUploadedReceiptDue),"asks_apple":\(plan.asksApple)}
        """
    }

    static func failureJSON(_ id: Int64, _ failure: VerificationFailure, atMs: Int64) -> String {
        """
        {"id":\(id),"at":\(atMs),"apple_status":\(JSONText.number(failure.upstreamStatus?.code)),\
        "backend":\(JSONText.quoted(failure.upstreamStatus?.backend.rawValue)),"reason":\(JSONText.quoted(failure.reason.rawValue)),\
        "detail":\(JSONText.quoted(failure.detail))}
        """
    }

    static func auditJSON(_ row: AuditRow, id auditID: Int64) -> String {
        let plan = row.plan, event = row.event, ms = plan.atMs, old = event.old, new = event.new
        return """
            {"id":\(auditID),"subscription_id":\(row.subscriptionID),"user_id":\(JSONText.quoted(row.userID)),"run_id":\(JSONText.number(plan.runID)),\
            "at":\(ms),"reason":\(JSONText.quoted(event.reason.rawValue)),"apple_status":\(JSONText.number(plan.upstreamStatus?.code)),\
            "backend":\(JSONText.quoted(plan.upstreamStatus?.backend.rawValue)),\
            "before":\(JSONText.quoted(old.entitlement(at: ms).rawValue)),"after":\(JSONText.quoted(new.entitlement(at: ms).rawValue)),\
            "old_values":\(JSONText.quoted(old.auditJSON)),"new_values":\(JSONText.quoted(new.auditJSON)),\
            "source":\(JSONText.quoted(plan.provenance.source)),"notification_id":\(JSONText.quoted(plan.provenance.notificationID)),\
            "transaction_id":\(JSONText.quoted(event.transactionID)),"revoked_at":\(JSONText.number(event.revokedAtMs)),\
            "apple_state_at":\(JSONText.number(plan.provenance.notifiedAtMs)),\(reportJSON(old: old, new: new))}
            """
    }

    /// The audit row's report columns as JSON members (a flag as 0/1, as the column holds it).
    private static func reportJSON(old: SubscriptionState, new: SubscriptionState) -> String {
        var out = ""
        for (index, (column, value)) in zip(SubscriptionEventsSQL.reportColumns, SubscriptionEventsSQL.reportValues(old: old, new: new)).enumerated() {
            if index > 0 { out.append(",") }
            out.append("\"\(column.name)\":")
            value.appendJSON(to: &out, flagsAsNumbers: true)
        }
        return out
    }

    /// `v.column` and `column type` for each of the audit row's report columns, as ``auditSet(_:)`` reads them.
    private static let reportColumnValues = SubscriptionEventsSQL.reportColumns.map { "v.\($0.name)" }.joined(separator: ", ")
    private static let reportColumnTypes = SubscriptionEventsSQL.reportColumns.map { "\($0.name) \($0.kind.postgresType)" }.joined(separator: ", ")

    /// `column = v.column` for every contract column.
    private static let contractAssignments = ContractColumn.allCases.map { "\($0.rawValue) = v.\($0.rawValue)" }.joined(separator: ", ")

    /// `column type` for every contract column, as `jsonb_to_recordset` reads the verified rows.
    private static let contractTypes = ContractColumn.allCases.map { "\($0.rawValue) \($0.kind.postgresType)" }.joined(separator: ", ")

    /// The state's values in the table's order (a flag as 0/1).
    private static func contractValues(_ state: SubscriptionState) -> [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(ContractColumn.allCases.count + 10)
        for column in ContractColumn.allCases { values.append(SQLValue(column.value(in: state))) }
        return values
    }

    /// An audit row to write, before its id is known.
    struct AuditRow {
        var subscriptionID: Int64
        var userID: String
        var plan: RowUpdatePlan
        var event: RowUpdatePlan.Event
    }
}
