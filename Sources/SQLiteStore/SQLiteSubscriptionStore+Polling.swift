import Foundation
import GRDB
import StatusPolling

extension SQLiteSubscriptionStore {
    public func apply(_ batch: ResultBatch) async throws -> [RowUpdatePlan] {
        guard !batch.results.isEmpty || batch.checkpoint != nil else { return [] }
        do {
            return try await writeBatch(batch)
        } catch let error as DatabaseError where Self.endsTheRun(error) {
            // The transaction rolled back whole; no retry of a single row would do better.
            throw Self.storeError(error, path: path, writing: true)
        }
    }

    /// Errors of the database as a whole (a full disk, a file made read-only or damaged, a lock
    /// held past the busy timeout), as opposed to one row's (a constraint).
    static func endsTheRun(_ error: DatabaseError) -> Bool {
        [.SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_BUSY, .SQLITE_LOCKED]
            .contains(error.resultCode)
    }

    private func writeBatch(_ batch: ResultBatch) async throws -> [RowUpdatePlan] {
        try await pool.write { db in
            let plans = try batch.results.map { result in try Self.applyResult(db, result) }
            if let checkpoint = batch.checkpoint {
                try db.cachedStatement(sql: "UPDATE poll_runs SET checkpoint_id = max(checkpoint_id, ?) WHERE id = ?")
                    .execute(arguments: [checkpoint.through, checkpoint.runID])
            }
            return plans
        }
    }

    /// One result inside the batch's transaction: planned from the row as this transaction sees
    /// it (an earlier row of the batch counts, so two rows racing for a chain get one owner), then
    /// written.
    static func applyResult(_ db: Database, _ result: ResultBatch.Result) throws -> RowUpdatePlan {
        // The receipt is compared in SQL: a row's receipt (kilobytes) is never read for it.
        var receiptSent: String?
        if case .verified(let update) = result { receiptSent = update.receiptSent }
        let current = try Row.fetchOne(
            try db.cachedStatement(sql: lockedRowQuery),
            arguments: [receiptSent, receiptSent, result.subscriptionID]
        ).map { row in
            RowUpdatePlan.LockedRow(userID: row[0], holdsReceiptSent: row[1], state: StateColumns.state(row, from: 4), appleStateAtMs: row[2], transactionAsOfMs: row[3])
        }
        let plan = try RowUpdatePlan(result, current: current) { otid in
            try Int64.fetchOne(try db.cachedStatement(sql: "SELECT id FROM subscriptions WHERE original_transaction_id = ?"), arguments: [otid])
        }
        try write(db, plan)
        return plan
    }

    /// The statements a batch runs per row, made once: `cachedStatement` hashes the SQL on each
    /// call, and an interpolated string would be built anew for every row as well.
    private static let lockedRowQuery = """
        SELECT user_id, ? IS NULL OR latest_receipt IS ?, apple_state_at, transaction_signed_at, \(StateColumns.list) FROM subscriptions WHERE id = ?
        """
    private static let verifiedUpdate = """
        UPDATE subscriptions SET \(StateColumns.assignments),
            transaction_signed_at = ?, latest_receipt = COALESCE(?, latest_receipt), apple_state_at = ?,
            last_attempt_at = ?, last_verified_at = ?, last_apple_status = ?, last_status_backend = ?,
            last_error_reason = NULL, last_error = NULL, consecutive_failures = 0,
            receipt_uploaded = max(receipt_uploaded * ?, ?)
        WHERE id = ?
        """

    private static func write(_ db: Database, _ plan: RowUpdatePlan) throws {
        switch plan.columns {
        case .untouched:
            break
        case .failure(let failure):
            try writeFailure(db, id: plan.subscriptionID, failure: failure, at: plan.atMs)
        case .verified(let state, let latestReceipt, let status, let appleStateAtMs):
            let arguments = StateColumns.arguments(state, then: [
                plan.transactionAsOfMs, latestReceipt, appleStateAtMs, plan.atMs, plan.atMs, status.code, status.backend.rawValue,
                plan.keepsUploadedReceiptDue ? 1 : 0, plan.asksApple ? 1 : 0, plan.subscriptionID,
            ])
            try db.cachedStatement(sql: verifiedUpdate).execute(arguments: arguments)
        }
        guard let userID = plan.userID else { return }
        for event in plan.events {
            try writeEvent(db, subscriptionID: plan.subscriptionID, userID: userID, plan: plan, event: event)
        }
        for chain in plan.discovered {
            try enrollDiscovered(db, chain, userID: userID, plan: plan)
        }
    }

    /// Another subscription of a new row's receipt that no row owns: enrolled as a verified row
    /// of the same user, with its audit event, so the web service and `show` see it.
    private static func enrollDiscovered(_ db: Database, _ state: SubscriptionState, userID: String, plan: RowUpdatePlan) throws {
        var arguments: StatementArguments = [userID, plan.discoveredReceipt]
        arguments += StateColumns.arguments(state)
        arguments += [plan.appleStateAtMs, plan.appleStateAtMs, plan.atMs, plan.atMs, plan.upstreamStatus?.code, plan.upstreamStatus?.backend.rawValue]
        try db.cachedStatement(sql: """
            INSERT INTO subscriptions (user_id, latest_receipt, \(StateColumns.list),
                transaction_signed_at, apple_state_at, last_attempt_at, last_verified_at, last_apple_status, last_status_backend)
            VALUES (?, ?, \(StateColumns.placeholders), ?, ?, ?, ?, ?, ?)
            """).execute(arguments: arguments)
        try writeEvent(db, subscriptionID: db.lastInsertedRowID, userID: userID, plan: plan, event: .init(reason: .discovered, old: .unverified, new: state))
    }

    /// One audit row, in the caller's transaction: who, when, which run, why, which backend
    /// answered with which status, before and after; and the outbound event of a contract change.
    private static func writeEvent(_ db: Database, subscriptionID: Int64, userID: String, plan: RowUpdatePlan, event: RowUpdatePlan.Event) throws {
        let ms = plan.atMs
        try db.cachedStatement(sql: """
            INSERT INTO subscription_events (subscription_id, user_id, run_id, at, reason, apple_status, status_backend,
                entitlement_before, entitlement_after, old_values, new_values, source, notification_id, transaction_id, revoked_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
                subscriptionID, userID, plan.runID, ms, event.reason.rawValue, plan.upstreamStatus?.code, plan.upstreamStatus?.backend.rawValue,
                event.old.entitlement(at: ms).rawValue, event.new.entitlement(at: ms).rawValue, event.old.auditJSON, event.new.auditJSON,
                plan.provenance.source, plan.provenance.notificationID, event.transactionID, event.revokedAtMs,
            ])
        // The change's outbound event beside its audit row, in the same transaction.
        if let outbound = OutboundEvent(event, plan: plan, subscriptionID: subscriptionID, userID: userID, auditEventID: db.lastInsertedRowID) {
            try db.cachedStatement(sql: OutboxSQL.insertSQLite).execute(arguments: [
                outbound.eventID, outbound.kind.rawValue, outbound.userID, outbound.subscriptionID, outbound.auditEventID, outbound.source,
                outbound.appleAtMs, outbound.atMs, outbound.body,
            ])
        }
    }

    /// Bookkeeping only: the contract columns are deliberately absent from this statement.
    private static func writeFailure(_ db: Database, id: Int64, failure: VerificationFailure, at ms: Int64) throws {
        try db.cachedStatement(sql: """
            UPDATE subscriptions SET
                last_attempt_at = ?, last_apple_status = ?, last_status_backend = ?, last_error_reason = ?, last_error = ?,
                consecutive_failures = consecutive_failures + 1
            WHERE id = ?
            """).execute(arguments: [ms, failure.upstreamStatus?.code, failure.upstreamStatus?.backend.rawValue, failure.reason.rawValue, failure.detail, id])
    }
}
