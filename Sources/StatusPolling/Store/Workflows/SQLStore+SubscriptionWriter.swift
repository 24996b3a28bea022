import EntitlementCore

/// Writing a batch of results, on any ``SQLStore``: the plans (``PlanWriter``), then the run's
/// checkpoint, and where work is shared the rows written marked done and their leases released;
/// the outbound events last.
extension SubscriptionWriter where Self: SQLStore {
    public func apply(_ batch: ResultBatch) async throws -> [RowUpdatePlan] {
        guard !batch.results.isEmpty || batch.checkpoint != nil else { return [] }
        let dialect = self.dialect, shared = workShare != nil, outbox = writesOutbox
        return try await transaction { session in
            let runID = batch.checkpoint?.runID
            var writer = PlanWriter(session: session, dialect: dialect, leases: shared, releasing: shared ? runID : nil, outbox: outbox)
            let (plans, written) = try await writer.write(batch.results)
            if let runID, shared, !written.isEmpty {
                for statement in PlanWriteSQL.doneInSharedWork(runID: runID, written: written) { try await session.execute(statement) }
            }
            if let checkpoint = batch.checkpoint {
                try await session.execute(PlanWriteSQL.checkpoint(dialect, runID: checkpoint.runID, through: checkpoint.through))
            }
            try await writer.writeOutbox()
            return plans
        }
    }
}
