import Foundation
import GRDB
import StatusPolling

extension SQLiteSubscriptionStore {
    /// The nightly selection as SQL; `SelectionWindows.Bounds.selects` states the same rule in Swift.
    private static func dueFilter(_ b: SelectionWindows.Bounds) -> SQL {
        """
        (original_transaction_id IS NULL
         OR receipt_uploaded = 1
         OR expires_at BETWEEN \(b.nearExpiryFrom) AND \(b.nearExpiryTo)
         OR (is_in_billing_retry = 1 AND expires_at >= \(b.billingRetryExpiredSince))
         OR grace_period_expires_at >= \(b.graceEndedSince))
        """
    }

    /// The WHERE clause of a selection.
    static func filter(_ selection: RowSelection, nowMs: Int64) -> SQL {
        switch selection {
        case .nightly(let windows): return dueFilter(windows.bounds(nowMs: nowMs))
        case .backfill(let runID): return "id IN (SELECT subscription_id FROM backfill_targets WHERE run_id = \(runID))"
        }
    }

    public func dueSubscriptions(_ selection: RowSelection, nowMs: Int64, after cursor: Int64, limit: Int) async throws -> [SubscriptionRow] {
        let filter = Self.filter(selection, nowMs: nowMs)
        return try await pool.read { db in
            try SubscriptionRecord
                .filter(literal: filter)
                .filter(Column("id") > cursor)
                .order(Column("id"))
                .limit(limit)
                .fetchAll(db)
                .map(\.row)
        }
    }

    public func countDue(_ selection: RowSelection, nowMs: Int64) async throws -> Int {
        let filter = Self.filter(selection, nowMs: nowMs)
        return try await pool.read { db in try SubscriptionRecord.filter(literal: filter).fetchCount(db) }
    }

    public func subscriptionID(owning originalTransactionID: String) async throws -> Int64? {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM subscriptions WHERE original_transaction_id = ?", arguments: [originalTransactionID])
        }
    }

    public func recordVerified(_ update: VerifiedUpdate) async throws -> VerifiedWriteResult {
        try await pool.write { db in
            guard let current = try SubscriptionRecord.fetchOne(db, key: update.subscriptionID) else { return .missing }
            guard current.latestReceipt == update.receiptSent else { return .superseded }
            let state = update.state
            if let chain = state.originalTransactionID,
                let owner = try Int64.fetchOne(db, sql: "SELECT id FROM subscriptions WHERE original_transaction_id = ? AND id <> ?", arguments: [chain, update.subscriptionID])
            {
                let failure = VerificationFailure(.conflict, "original_transaction_id \(chain) belongs to subscription \(owner)", appleStatus: update.appleStatus)
                try Self.writeFailure(db, id: update.subscriptionID, failure: failure, at: update.verifiedAtMs)
                try Self.writeEvent(
                    db, subscriptionID: current.id, userID: current.userID, runID: update.runID, at: update.verifiedAtMs,
                    reason: "conflict", appleStatus: update.appleStatus.rawValue, old: current.state, new: current.state)
                return .conflict(owner: owner)
            }
            try db.execute(literal: """
                UPDATE subscriptions SET
                    original_transaction_id = \(state.originalTransactionID),
                    product_id = \(state.productID),
                    environment = \(state.environment),
                    expires_at = \(state.expiresAt),
                    grace_period_expires_at = \(state.gracePeriodExpiresAt),
                    is_in_billing_retry = \(state.isInBillingRetry),
                    auto_renew_status = \(state.autoRenewStatus),
                    auto_renew_product_id = \(state.autoRenewProductID),
                    expiration_intent = \(state.expirationIntent),
                    cancelled_at = \(state.cancelledAt),
                    latest_receipt = COALESCE(\(update.latestReceipt), latest_receipt),
                    last_attempt_at = \(update.verifiedAtMs),
                    last_verified_at = \(update.verifiedAtMs),
                    last_apple_status = \(update.appleStatus.rawValue),
                    last_error_reason = NULL,
                    last_error = NULL,
                    consecutive_failures = 0,
                    receipt_uploaded = 0
                WHERE id = \(update.subscriptionID)
                """)
            if current.state != state {
                let reason = SubscriptionTransition.between(current.state, state, at: update.verifiedAtMs)
                try Self.writeEvent(
                    db, subscriptionID: current.id, userID: current.userID, runID: update.runID, at: update.verifiedAtMs,
                    reason: reason.rawValue, appleStatus: update.appleStatus.rawValue, old: current.state, new: state)
            }
            return .written(previous: current.state)
        }
    }

    public func recordFailure(_ failure: FailedVerification) async throws {
        try await pool.write { db in
            try Self.writeFailure(db, id: failure.subscriptionID, failure: failure.failure, at: failure.attemptedAtMs)
        }
    }

    /// One audit row, in the caller's transaction: who, when, which run, why, before and after.
    static func writeEvent(_ db: Database, subscriptionID: Int64, userID: String, runID: Int64?, at ms: Int64, reason: String, appleStatus: Int?, old: SubscriptionState, new: SubscriptionState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let oldJSON = String(decoding: try encoder.encode(old), as: UTF8.self)
        let newJSON = String(decoding: try encoder.encode(new), as: UTF8.self)
        try db.execute(literal: """
            INSERT INTO subscription_events (subscription_id, user_id, run_id, at, reason, apple_status,
                entitlement_before, entitlement_after, old_values, new_values)
            VALUES (\(subscriptionID), \(userID), \(runID), \(ms), \(reason), \(appleStatus),
                \(old.entitlement(at: ms).rawValue), \(new.entitlement(at: ms).rawValue), \(oldJSON), \(newJSON))
            """)
    }

    /// Bookkeeping only: the contract columns are deliberately absent from this statement.
    private static func writeFailure(_ db: Database, id: Int64, failure: VerificationFailure, at ms: Int64) throws {
        try db.execute(literal: """
            UPDATE subscriptions SET
                last_attempt_at = \(ms),
                last_apple_status = \(failure.appleStatus?.rawValue),
                last_error_reason = \(failure.reason.rawValue),
                last_error = \(failure.detail),
                consecutive_failures = consecutive_failures + 1
            WHERE id = \(id)
            """)
    }
}
