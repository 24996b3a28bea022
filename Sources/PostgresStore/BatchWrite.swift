import Logging
import PostgresNIO
import StatusPolling

/// One batch of results written in a handful of statements whatever its size: the batch's rows
/// read and locked at once, the chains they adopt looked up at once, then every verified row,
/// every failure and every audit event written by one statement each from a JSON array
/// (`jsonb_to_recordset`). A statement per row cost a round trip and most of a worker's CPU; each
/// result is still planned row by row, in order (`RowUpdatePlan`, the rules every writer shares),
/// on the locked rows and the chains' owners as the batch leaves them, so an earlier result counts.
struct BatchWrite {
    let connection: PostgresConnection
    let logger: Logger
    /// The run whose leases the rows it writes give up, in the same statement as their results:
    /// one update of the wide row fewer each (nil: a run without leases).
    let releasing: Int64?

    /// Writes the results; returns their plans in order, the ids whose results were written (the
    /// others' leases belong to another run), and the outbound events of their changes, for the
    /// caller to add last in its transaction (``OutboxWrite``).
    func write(_ results: [ResultBatch.Result]) async throws -> (plans: [RowUpdatePlan], written: [Int64], outbox: [String]) {
        let ids = results.map(\.subscriptionID)
        var current: [Int64: (locked: RowUpdatePlan.LockedRow, receipt: String)] = [:]
        // Locked in id order, as every writer locks, so two workers' batches cannot deadlock here.
        for (id, row) in try await rows(
            """
            SELECT id, user_id, latest_receipt, lease_run, apple_state_at, transaction_signed_at, \(unescaped: ContractColumn.list)
            FROM subscriptions WHERE id = ANY(\(ids)) ORDER BY id FOR UPDATE
            """,
            { reader in
                let id: Int64 = try reader.next(), userID: String = try reader.next(), receipt: String = try reader.next()
                let leaseRun: Int64? = try reader.next(), appleStateAt: Int64? = try reader.next(), transactionAsOf: Int64? = try reader.next()
                let locked = RowUpdatePlan.LockedRow(
                    userID: userID, holdsReceiptSent: false, state: try SubscriptionRowSQL.state(&reader), appleStateAtMs: appleStateAt, leaseRun: leaseRun,
                    transactionAsOfMs: transactionAsOf)
                return (id, (locked, receipt))
            }
        ) {
            current[id] = row
        }
        var owners = try await owners(of: results, current: current)
        var plans: [RowUpdatePlan] = []
        var written: [Int64] = []
        var verifiedRows: [String] = [], failureRows: [String] = [], events: [AuditRow] = []
        for result in results {
            let id = result.subscriptionID
            var locked = current[id]?.locked
            if case .verified(let update) = result { locked?.holdsReceiptSent = update.receiptSent.map { current[id]?.receipt == $0 } ?? true }
            let plan = RowUpdatePlan(result, current: locked, ownerOf: { owners[$0] })
            plans.append(plan)
            if plan.isWritten { written.append(id) }
            switch plan.columns {
            case .untouched: break
            case .failure(let failure):
                failureRows.append(Self.failureJSON(id: id, failure: failure, at: plan.atMs))
            case .verified(let state, let latestReceipt, let status, let appleStateAtMs):
                verifiedRows.append(Self.verifiedJSON(
                    id: id, state: state, latestReceipt: latestReceipt, status: status, at: plan.atMs, appleStateAt: appleStateAtMs,
                    transactionAsOf: plan.transactionAsOfMs, keepsUpload: plan.keepsUploadedReceiptDue, asksApple: plan.asksApple))
                // Later results of the batch see this row's chain as the transaction will.
                if let released = current[id]?.locked.state.originalTransactionID { owners[released] = nil }
                if let chain = state.originalTransactionID { owners[chain] = id }
            }
            guard let userID = plan.userID else { continue }
            events += plan.events.map { AuditRow(subscriptionID: id, userID: userID, plan: plan, event: $0) }
            for chain in plan.discovered {
                let newID = try await enrollDiscovered(chain, userID: userID, plan: plan)
                owners[chain.originalTransactionID!] = newID
                events.append(AuditRow(subscriptionID: newID, userID: userID, plan: plan, event: .init(reason: .discovered, old: .unverified, new: chain)))
            }
        }
        try await writeVerified(verifiedRows)
        try await writeFailures(failureRows)
        let outbox = try await writeEvents(events)
        return (plans, written, outbox)
    }

    /// An audit row to write, before its id is known.
    struct AuditRow {
        var subscriptionID: Int64
        var userID: String
        var plan: RowUpdatePlan
        var event: RowUpdatePlan.Event
    }

    /// Which rows own the chains the batch's new rows may adopt, as the transaction sees them.
    private func owners(of results: [ResultBatch.Result], current: [Int64: (locked: RowUpdatePlan.LockedRow, receipt: String)]) async throws -> [String: Int64] {
        let otids = results.flatMap { result -> [String] in
            guard case .verified(let update) = result, let chain = update.state.originalTransactionID,
                chain != current[update.subscriptionID]?.locked.state.originalTransactionID
            else { return [] }
            return ([update.state] + update.otherChains).compactMap(\.originalTransactionID)
        }
        guard !otids.isEmpty else { return [:] }
        let pairs = try await connection.query(
            "SELECT original_transaction_id, id FROM subscriptions WHERE original_transaction_id = ANY(\(otids))", logger: logger
        ).decode((String, Int64).self).collect()
        return Dictionary(pairs.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
    }

    private func writeVerified(_ rows: [String]) async throws {
        guard !rows.isEmpty else { return }
        try await connection.query("""
            UPDATE subscriptions AS s SET
                \(unescaped: Self.contractAssignments), transaction_signed_at = v.transaction_signed_at,
                latest_receipt = COALESCE(v.latest_receipt, s.latest_receipt), apple_state_at = v.apple_state_at,
                last_attempt_at = v.at, last_verified_at = v.at, last_apple_status = v.apple_status, last_status_backend = v.backend,
                last_error_reason = NULL, last_error = NULL, consecutive_failures = 0,
                receipt_uploaded = CASE WHEN v.asks_apple THEN 1 WHEN v.keeps_upload THEN s.receipt_uploaded ELSE 0 END,
                lease_owner = CASE WHEN s.lease_run = \(releasing) THEN NULL ELSE s.lease_owner END,
                lease_expires_at = CASE WHEN s.lease_run = \(releasing) THEN NULL ELSE s.lease_expires_at END,
                lease_run = CASE WHEN s.lease_run = \(releasing) THEN NULL ELSE s.lease_run END
            FROM jsonb_to_recordset(\("[" + rows.joined(separator: ",") + "]")::jsonb) AS v(
                id bigint, \(unescaped: Self.contractTypes), transaction_signed_at bigint,
                latest_receipt text, apple_state_at bigint, at bigint, apple_status integer, backend text,
                keeps_upload boolean, asks_apple boolean)
            WHERE s.id = v.id
            """, logger: logger)
    }

    /// Bookkeeping only: the contract columns are deliberately absent from this statement.
    private func writeFailures(_ rows: [String]) async throws {
        guard !rows.isEmpty else { return }
        try await connection.query("""
            UPDATE subscriptions AS s SET
                last_attempt_at = v.at, last_apple_status = v.apple_status, last_status_backend = v.backend,
                last_error_reason = v.reason, last_error = v.detail, consecutive_failures = s.consecutive_failures + 1,
                lease_owner = CASE WHEN s.lease_run = \(releasing) THEN NULL ELSE s.lease_owner END,
                lease_expires_at = CASE WHEN s.lease_run = \(releasing) THEN NULL ELSE s.lease_expires_at END,
                lease_run = CASE WHEN s.lease_run = \(releasing) THEN NULL ELSE s.lease_run END
            FROM jsonb_to_recordset(\("[" + rows.joined(separator: ",") + "]")::jsonb) AS v(
                id bigint, at bigint, apple_status integer, backend text, reason text, detail text)
            WHERE s.id = v.id
            """, logger: logger)
    }

    /// The audit rows, in the batch's order: who, when, which run, why, which backend answered
    /// with which status, before and after. Their ids are taken from the trail's sequence first,
    /// in order, so that each contract change's outbound event names its audit row; those events'
    /// rows are returned.
    private func writeEvents(_ audit: [AuditRow]) async throws -> [String] {
        guard !audit.isEmpty else { return [] }
        let ids = try await connection.query(
            "SELECT nextval(pg_get_serial_sequence('subscription_events', 'id')) FROM generate_series(1, \(audit.count))", logger: logger
        ).decode(Int64.self).collect().sorted()
        var rows: [String] = [], outbox: [String] = []
        for (auditID, row) in zip(ids, audit) {
            rows.append(Self.eventJSON(auditID: auditID, id: row.subscriptionID, userID: row.userID, plan: row.plan, event: row.event))
            if let outbound = OutboundEvent(row.event, plan: row.plan, subscriptionID: row.subscriptionID, userID: row.userID, auditEventID: auditID) {
                outbox.append(OutboxSQL.recordJSON(outbound))
            }
        }
        try await connection.query("""
            INSERT INTO subscription_events (id, subscription_id, user_id, run_id, at, reason, apple_status, status_backend,
                entitlement_before, entitlement_after, old_values, new_values, source, notification_id, transaction_id, revoked_at)
            SELECT v.id, v.subscription_id, v.user_id, v.run_id, v.at, v.reason, v.apple_status, v.backend, v.before, v.after, v.old_values, v.new_values,
                v.source, v.notification_id, v.transaction_id, v.revoked_at
            FROM jsonb_array_elements(\("[" + rows.joined(separator: ",") + "]")::jsonb) WITH ORDINALITY AS e(row, n),
                jsonb_to_record(e.row) AS v(
                    id bigint, subscription_id bigint, user_id text, run_id bigint, at bigint, reason text, apple_status integer, backend text,
                    before text, after text, old_values text, new_values text, source text, notification_id text, transaction_id text, revoked_at bigint)
            ORDER BY e.n
            """, logger: logger)
        return outbox
    }

    /// Another subscription of a new row's receipt that no row owns: enrolled as a verified row
    /// of the same user, so the web service and `show` see it; its id for the audit event.
    private func enrollDiscovered(_ state: SubscriptionState, userID: String, plan: RowUpdatePlan) async throws -> Int64 {
        var binds = PostgresBindings()
        binds.append(userID)
        binds.append(plan.discoveredReceipt)
        for column in ContractColumn.allCases { binds.append(column.value(in: state)) }
        let next = 3 + ContractColumn.allCases.count
        for value in [plan.appleStateAtMs, plan.appleStateAtMs, plan.atMs, plan.atMs] { binds.append(value) }
        binds.append(plan.upstreamStatus?.code)
        binds.append(plan.upstreamStatus?.backend.rawValue)
        let sql = """
            INSERT INTO subscriptions (user_id, latest_receipt, \(ContractColumn.list),
                transaction_signed_at, apple_state_at, last_attempt_at, last_verified_at, last_apple_status, last_status_backend)
            VALUES ($1, $2, \(PostgresBindings.contractPlaceholders(from: 3)),
                $\(next), $\(next + 1), $\(next + 2), $\(next + 3), $\(next + 4)::integer, $\(next + 5))
            RETURNING id
            """
        return try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).decode(Int64.self).collect()[0]
    }

    private func rows<T>(_ query: PostgresQuery, _ body: (inout RowReader) throws -> T) async throws -> [T] {
        try await PostgresSubscriptionStore.rows(connection.query(query, logger: logger), body)
    }

    static func verifiedJSON(
        id: Int64, state s: SubscriptionState, latestReceipt: String?, status: UpstreamStatus, at ms: Int64, appleStateAt: Int64, transactionAsOf: Int64?,
        keepsUpload: Bool, asksApple: Bool
    ) -> String {
        """
        {"id":\(id),\(s.columnsJSON),"transaction_signed_at":\(JSONText.number(transactionAsOf)),\
        "latest_receipt":\(JSONText.quoted(latestReceipt)),"apple_state_at":\(appleStateAt),"at":\(ms),"apple_status":\(status.code),\
        "backend":\(JSONText.quoted(status.backend.rawValue)),"keeps_upload":\(keepsUpload),"asks_apple":\(asksApple)}
        """
    }

    /// `column = v.column` for every contract column.
    static let contractAssignments = ContractColumn.allCases.map { "\($0.rawValue) = v.\($0.rawValue)" }.joined(separator: ", ")

    /// `column type` for every contract column, as `jsonb_to_recordset` reads the verified rows.
    static let contractTypes = ContractColumn.allCases.map { "\($0.rawValue) \($0.kind.postgresType)" }.joined(separator: ", ")

    static func failureJSON(id: Int64, failure: VerificationFailure, at ms: Int64) -> String {
        """
        {"id":\(id),"at":\(ms),"apple_status":\(JSONText.number(failure.upstreamStatus?.code)),\
        "backend":\(JSONText.quoted(failure.upstreamStatus?.backend.rawValue)),"reason":\(JSONText.quoted(failure.reason.rawValue)),\
        "detail":\(JSONText.quoted(failure.detail))}
        """
    }

    static func eventJSON(auditID: Int64, id: Int64, userID: String, plan: RowUpdatePlan, event: RowUpdatePlan.Event) -> String {
        let ms = plan.atMs, reason = event.reason, old = event.old, new = event.new
        return """
            {"id":\(auditID),"subscription_id":\(id),"user_id":\(JSONText.quoted(userID)),"run_id":\(JSONText.number(plan.runID)),"at":\(ms),\
            "reason":\(JSONText.quoted(reason.rawValue)),"apple_status":\(JSONText.number(plan.upstreamStatus?.code)),\
            "backend":\(JSONText.quoted(plan.upstreamStatus?.backend.rawValue)),\
            "before":\(JSONText.quoted(old.entitlement(at: ms).rawValue)),"after":\(JSONText.quoted(new.entitlement(at: ms).rawValue)),\
            "old_values":\(JSONText.quoted(old.auditJSON)),"new_values":\(JSONText.quoted(new.auditJSON)),\
            "source":\(JSONText.quoted(plan.provenance.source)),"notification_id":\(JSONText.quoted(plan.provenance.notificationID)),\
            "transaction_id":\(JSONText.quoted(event.transactionID)),"revoked_at":\(JSONText.number(event.revokedAtMs))}
            """
    }
}
