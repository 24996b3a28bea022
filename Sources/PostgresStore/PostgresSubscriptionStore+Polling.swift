import Foundation
import Logging
import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
    /// The nightly selection, each row with whether its Apple data is fresh (then the run skips
    /// it): a union of index-backed terms, one per window, so finding the due rows reads index
    /// entries of due rows only (`SelectionWindows.Bounds.selects` and `isFresh` state the same
    /// rule in Swift, row by row). An uploaded receipt makes every row of its user due: a receipt
    /// lists all of the user's chains, and a sibling row's chain may have changed with it.
    /// Public for the plan test.
    public static func nightlyDueIDsSQL(_ windows: SelectionWindows, nowMs: Int64) -> String {
        let b = windows.bounds(nowMs: nowMs)
        let selected = """
            SELECT id FROM subscriptions WHERE original_transaction_id IS NULL
            UNION SELECT id FROM subscriptions WHERE user_id IN (SELECT user_id FROM subscriptions WHERE receipt_uploaded = 1)
            UNION SELECT id FROM subscriptions WHERE expires_at BETWEEN \(b.nearExpiryFrom) AND \(b.nearExpiryTo)
            UNION SELECT id FROM subscriptions WHERE is_in_billing_retry = 1 AND expires_at >= \(b.billingRetryExpiredSince)
            UNION SELECT id FROM subscriptions WHERE grace_period_expires_at >= \(b.graceEndedSince)\(lapsedTerm(b.lapsed))
            """
        guard b.canBeFresh else { return "SELECT id, false AS fresh FROM (\(selected)) AS selected" }
        // Each selected row's freshness from the row itself, found by its primary key (a join
        // would let the planner scan the table; the receipt is TOASTed apart, never read).
        return """
            SELECT selected.id, (SELECT (\(b.freshSQL(row: "f"))) = 1 FROM subscriptions AS f WHERE f.id = selected.id) AS fresh
            FROM (\(selected)) AS selected
            """
    }

    /// The lapsed sweep's term: tonight's expiry ranges, each a search of the `expires_at`
    /// index (which holds `is_in_billing_retry` too).
    private static func lapsedTerm(_ night: LapsedSweep.Night?) -> String {
        guard let ranges = night?.expiryRanges, !ranges.isEmpty else { return "" }
        let turns = ranges.map { "(\($0.lowerBound)::bigint, \($0.upperBound)::bigint)" }.joined(separator: ", ")
        return """

            UNION SELECT s.id FROM (VALUES \(turns)) AS turn(expires_from, expires_through)
                JOIN subscriptions AS s ON s.expires_at BETWEEN turn.expires_from AND turn.expires_through
                WHERE s.is_in_billing_retry = 0
            """
    }

    public func dueSelection(_ selection: RowSelection, nowMs: Int64, after cursor: Int64) async throws -> DueSelection {
        try await read { connection, logger in
            switch selection {
            case .nightly(let windows):
                let sql = "SELECT id, fresh FROM (\(Self.nightlyDueIDsSQL(windows, nowMs: nowMs))) AS due WHERE id > \(cursor) ORDER BY id"
                var due = DueSelection()
                for try await (id, fresh) in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode((Int64, Bool).self) {
                    if fresh { due.skippedFresh += 1 } else { due.ids.append(id) }
                }
                return due
            case .backfill(let runID):
                return DueSelection(ids: try await connection.query("""
                    SELECT t.subscription_id FROM work_targets t JOIN poll_runs r ON t.work_id = r.work_id
                    WHERE r.id = \(runID) AND NOT t.done AND t.subscription_id > \(cursor) ORDER BY t.subscription_id
                    """, logger: logger).decode(Int64.self).collect())
            }
        }
    }


    /// Writes the batch in one transaction (``BatchWrite``), then marks the rows written done in
    /// the run's shared work, releases their leases, moves the checkpoint and adds the changes'
    /// outbound events (``OutboxWrite``, last). A row whose lease
    /// this run no longer holds (it expired and another worker took it) is left to that worker:
    /// nothing is written for it and a verified answer counts as superseded.
    public func apply(_ batch: ResultBatch) async throws -> [RowUpdatePlan] {
        guard !batch.results.isEmpty || batch.checkpoint != nil else { return [] }
        let runID = batch.checkpoint?.runID
        return try await transaction { connection, logger in
            let (plans, written, outbox) = try await BatchWrite(connection: connection, logger: logger, releasing: runID).write(batch.results)
            if let runID {
                if !written.isEmpty {
                    try await connection.query("""
                        UPDATE work_targets SET done = true
                        WHERE work_id = (SELECT work_id FROM poll_runs WHERE id = \(runID)) AND subscription_id = ANY(\(written)) AND NOT done
                        """, logger: logger)
                    // The results' own statements released the leases of the rows they wrote; a
                    // superseded receipt's row is written nothing and gives its lease up here.
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
            try await OutboxWrite.insert(outbox, connection: connection, logger: logger)
            return plans
        }
    }
}
