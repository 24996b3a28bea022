import Foundation
import Logging
import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
    /// The nightly selection: a union of index-backed terms, one per window, so finding the due
    /// rows reads index entries of due rows only (`SelectionWindows.Bounds.selects` states the
    /// same rule in Swift). Public for the plan test.
    public static func nightlyDueIDsSQL(_ windows: SelectionWindows, nowMs: Int64) -> String {
        let b = windows.bounds(nowMs: nowMs)
        return """
            SELECT id FROM subscriptions WHERE original_transaction_id IS NULL
            UNION SELECT id FROM subscriptions WHERE receipt_uploaded = 1
            UNION SELECT id FROM subscriptions WHERE expires_at BETWEEN \(b.nearExpiryFrom) AND \(b.nearExpiryTo)
            UNION SELECT id FROM subscriptions WHERE is_in_billing_retry = 1 AND expires_at >= \(b.billingRetryExpiredSince)
            UNION SELECT id FROM subscriptions WHERE grace_period_expires_at >= \(b.graceEndedSince)
            """
    }

    public func dueSubscriptionIDs(_ selection: RowSelection, nowMs: Int64, after cursor: Int64) async throws -> [Int64] {
        try await read { connection, logger in
            switch selection {
            case .nightly(let windows):
                let sql = "SELECT id FROM (\(Self.nightlyDueIDsSQL(windows, nowMs: nowMs))) AS due WHERE id > \(cursor) ORDER BY id"
                return try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Int64.self).collect()
            case .backfill(let runID):
                return try await connection.query("""
                    SELECT t.subscription_id FROM work_targets t JOIN poll_runs r ON t.work_id = r.work_id
                    WHERE r.id = \(runID) AND NOT t.done AND t.subscription_id > \(cursor) ORDER BY t.subscription_id
                    """, logger: logger).decode(Int64.self).collect()
            }
        }
    }

    public func subscriptions(ids: [Int64]) async throws -> [SubscriptionRow] {
        guard !ids.isEmpty else { return [] }
        return try await read { connection, logger in
            try await Self.rows(connection.query(
                "SELECT \(unescaped: RowReader.subscriptionColumns) FROM subscriptions WHERE id = ANY(\(ids)) ORDER BY id", logger: logger)
            ) { reader in try reader.subscription() }
        }
    }

    public func subscriptionID(owning originalTransactionID: String) async throws -> Int64? {
        try await read { connection, logger in
            try await connection.query(
                "SELECT id FROM subscriptions WHERE original_transaction_id = \(originalTransactionID)", logger: logger
            ).decode(Int64.self).collect().first
        }
    }

    /// Writes the batch in one transaction: each result, then the batch's rows marked done in the
    /// run's shared work, their leases released, and the checkpoint. A row whose lease this run no
    /// longer holds (it expired and another worker took it) is left to that worker: nothing is
    /// written for it and it counts as superseded.
    public func write(_ batch: ResultBatch) async throws -> [VerifiedWriteResult?] {
        guard !batch.results.isEmpty || batch.checkpoint != nil else { return [] }
        let runID = batch.checkpoint?.runID
        return try await transaction { connection, logger in
            var outcomes: [VerifiedWriteResult?] = []
            var written: [Int64] = []
            for result in batch.results {
                switch result {
                case .verified(let update):
                    guard let outcome = try await Self.writeVerified(connection, update, logger: logger) else {
                        outcomes.append(.superseded)
                        continue
                    }
                    outcomes.append(outcome)
                    written.append(update.subscriptionID)
                case .failed(let failed):
                    if try await Self.leaseLost(connection, id: failed.subscriptionID, runID: failed.runID, logger: logger) {
                        outcomes.append(nil)
                        continue
                    }
                    try await Self.writeFailure(connection, id: failed.subscriptionID, failure: failed.failure, at: failed.attemptedAtMs, logger: logger)
                    outcomes.append(nil)
                    written.append(failed.subscriptionID)
                }
            }
            if let runID {
                if !written.isEmpty {
                    try await connection.query("""
                        UPDATE work_targets SET done = true
                        WHERE work_id = (SELECT work_id FROM poll_runs WHERE id = \(runID)) AND subscription_id = ANY(\(written)) AND NOT done
                        """, logger: logger)
                    try await connection.query("""
                        UPDATE subscriptions SET lease_owner = NULL, lease_run = NULL, lease_expires_at = NULL
                        WHERE id = ANY(\(written)) AND lease_run = \(runID)
                        """, logger: logger)
                }
                if let through = batch.checkpoint?.through {
                    try await connection.query(
                        "UPDATE poll_runs SET checkpoint_id = GREATEST(checkpoint_id, \(through)) WHERE id = \(runID)", logger: logger)
                }
            }
            return outcomes
        }
    }

    /// Whether another run leased the row since this run did.
    private static func leaseLost(_ connection: PostgresConnection, id: Int64, runID: Int64?, logger: Logger) async throws -> Bool {
        guard let runID else { return false }
        let holder = try await connection.query(
            "SELECT lease_run FROM subscriptions WHERE id = \(id) FOR UPDATE", logger: logger
        ).decode(Int64?.self).collect().first ?? nil
        return holder != nil && holder != runID
    }

    /// One verified result inside the batch's transaction; nil when another run holds the row's
    /// lease. The row is locked first, so the web service's upload of a new receipt either lands
    /// before (and the answer is superseded) or waits for the commit.
    private static func writeVerified(_ connection: PostgresConnection, _ update: VerifiedUpdate, logger: Logger) async throws -> VerifiedWriteResult? {
        let current = try await rows(connection.query("""
            SELECT user_id, latest_receipt = \(update.receiptSent), lease_run, \(unescaped: RowReader.stateColumns)
            FROM subscriptions WHERE id = \(update.subscriptionID) FOR UPDATE
            """, logger: logger)
        ) { reader in (try reader.next(String.self), try reader.next(Bool.self), try reader.next(Int64?.self), try reader.state()) }.first
        guard let (userID, sameReceipt, leaseRun, previous) = current else { return .missing }
        if let runID = update.runID, let leaseRun, leaseRun != runID { return nil }
        guard sameReceipt else { return .superseded }
        var state = update.state
        var discovered: [SubscriptionState] = []
        if let chain = state.originalTransactionID, chain != previous.originalTransactionID {
            // Adopting a chain: the first candidate no other row owns, read inside this
            // transaction; a worker adopting the same chain at once loses on the unique index,
            // and the run writes that row again alone, which then finds the owner.
            let candidates: [SubscriptionState] = [state] + update.otherChains
            let otids = candidates.compactMap(\.originalTransactionID)
            let owners = Dictionary(try await connection.query(
                "SELECT original_transaction_id, id FROM subscriptions WHERE original_transaction_id = ANY(\(otids)) AND id <> \(update.subscriptionID)",
                logger: logger
            ).decode((String, Int64).self).collect().map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
            switch ChainAdoption(candidates: candidates, ownerOf: { owners[$0] }) {
            case .conflict(let owner):
                let failure = VerificationFailure(.conflict, "original_transaction_id \(chain) belongs to subscription \(owner)", upstreamStatus: update.upstreamStatus)
                try await writeFailure(connection, id: update.subscriptionID, failure: failure, at: update.verifiedAtMs, logger: logger)
                try await writeEvent(
                    connection, subscriptionID: update.subscriptionID, userID: userID, runID: update.runID, at: update.verifiedAtMs,
                    reason: "conflict", upstream: update.upstreamStatus, old: previous, new: previous, logger: logger)
                return .conflict(owner: owner)
            case .adopt(let adopted, let others):
                state = adopted
                discovered = others
            }
        }
        try await connection.query("""
            UPDATE subscriptions SET
                original_transaction_id = \(state.originalTransactionID), product_id = \(state.productID), environment = \(state.environment),
                expires_at = \(state.expiresAt), grace_period_expires_at = \(state.gracePeriodExpiresAt),
                is_in_billing_retry = \(state.isInBillingRetry ? 1 : 0)::smallint, auto_renew_status = \(state.autoRenewStatus.map { $0 ? 1 : 0 })::smallint,
                auto_renew_product_id = \(state.autoRenewProductID), expiration_intent = \(state.expirationIntent)::integer, cancelled_at = \(state.cancelledAt),
                latest_receipt = COALESCE(\(update.latestReceipt), latest_receipt),
                last_attempt_at = \(update.verifiedAtMs), last_verified_at = \(update.verifiedAtMs),
                last_apple_status = \(update.upstreamStatus.code)::integer, last_status_backend = \(update.upstreamStatus.backend.rawValue),
                last_error_reason = NULL, last_error = NULL, consecutive_failures = 0, receipt_uploaded = 0
            WHERE id = \(update.subscriptionID)
            """, logger: logger)
        if previous != state {
            let reason = SubscriptionTransition.between(previous, state, at: update.verifiedAtMs)
            try await writeEvent(
                connection, subscriptionID: update.subscriptionID, userID: userID, runID: update.runID, at: update.verifiedAtMs,
                reason: reason.rawValue, upstream: update.upstreamStatus, old: previous, new: state, logger: logger)
        }
        for chain in discovered {
            try await enrollDiscovered(connection, chain, userID: userID, receipt: update.latestReceipt ?? update.receiptSent, update: update, logger: logger)
        }
        return .written(previous: previous, adopted: state == update.state ? nil : state, discovered: discovered.count)
    }

    /// Another subscription of a new row's receipt that no row owns: enrolled as a verified row
    /// of the same user, with its audit event, so the web service and `show` see it.
    private static func enrollDiscovered(
        _ connection: PostgresConnection, _ state: SubscriptionState, userID: String, receipt: String, update: VerifiedUpdate, logger: Logger
    ) async throws {
        let id = try await connection.query("""
            INSERT INTO subscriptions (
                user_id, latest_receipt, original_transaction_id, product_id, environment, expires_at,
                grace_period_expires_at, is_in_billing_retry, auto_renew_status, auto_renew_product_id,
                expiration_intent, cancelled_at, last_attempt_at, last_verified_at, last_apple_status, last_status_backend)
            VALUES (
                \(userID), \(receipt), \(state.originalTransactionID), \(state.productID), \(state.environment), \(state.expiresAt),
                \(state.gracePeriodExpiresAt), \(state.isInBillingRetry ? 1 : 0)::smallint, \(state.autoRenewStatus.map { $0 ? 1 : 0 })::smallint,
                \(state.autoRenewProductID), \(state.expirationIntent)::integer, \(state.cancelledAt), \(update.verifiedAtMs), \(update.verifiedAtMs),
                \(update.upstreamStatus.code)::integer, \(update.upstreamStatus.backend.rawValue))
            RETURNING id
            """, logger: logger).decode(Int64.self).collect()[0]
        try await writeEvent(
            connection, subscriptionID: id, userID: userID, runID: update.runID, at: update.verifiedAtMs,
            reason: "discovered", upstream: update.upstreamStatus, old: .unverified, new: state, logger: logger)
    }

    /// One audit row, in the caller's transaction: who, when, which run, why, which backend
    /// answered with which status, before and after.
    static func writeEvent(
        _ connection: PostgresConnection, subscriptionID: Int64, userID: String, runID: Int64?, at ms: Int64, reason: String,
        upstream: UpstreamStatus?, old: SubscriptionState, new: SubscriptionState, logger: Logger
    ) async throws {
        try await connection.query("""
            INSERT INTO subscription_events (subscription_id, user_id, run_id, at, reason, apple_status, status_backend,
                entitlement_before, entitlement_after, old_values, new_values)
            VALUES (\(subscriptionID), \(userID), \(runID), \(ms), \(reason), \(upstream?.code)::integer, \(upstream?.backend.rawValue),
                \(old.entitlement(at: ms).rawValue), \(new.entitlement(at: ms).rawValue), \(old.auditJSON), \(new.auditJSON))
            """, logger: logger)
    }

    /// Bookkeeping only: the contract columns are deliberately absent from this statement.
    private static func writeFailure(_ connection: PostgresConnection, id: Int64, failure: VerificationFailure, at ms: Int64, logger: Logger) async throws {
        try await connection.query("""
            UPDATE subscriptions SET
                last_attempt_at = \(ms), last_apple_status = \(failure.upstreamStatus?.code)::integer,
                last_status_backend = \(failure.upstreamStatus?.backend.rawValue), last_error_reason = \(failure.reason.rawValue),
                last_error = \(failure.detail), consecutive_failures = consecutive_failures + 1
            WHERE id = \(id)
            """, logger: logger)
    }
}
