import Foundation
import Logging
import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
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
