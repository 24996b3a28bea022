import EntitlementCore

/// What any writer of Apple's answers needs from a database: write results to rows it locks
/// itself, and say who owns a chain. No run is needed — a poll, a backfill and a notification
/// all write through it, and `RowUpdatePlan` decides what each result does.
public protocol SubscriptionWriter: Sendable {
    /// Writes a batch of results in one transaction, in order, and the batch's checkpoint with
    /// them: each result planned by ``RowUpdatePlan`` on the row as the transaction locked it (an
    /// earlier result of the batch included). Returns the plans it wrote, in order: the one account
    /// of each row's fate that the audit trail was written from and the run's report reads.
    func apply(_ batch: ResultBatch) async throws -> [RowUpdatePlan]
    /// The row that owns `originalTransactionID`, if any: lets a dry run plan without writing.
    func subscriptionID(owning originalTransactionID: String) async throws -> Int64?
}

extension SubscriptionWriter {
    /// ``apply(_:)``, answering only what each verified result did (nil for a failure).
    public func write(_ batch: ResultBatch) async throws -> [VerifiedWriteResult?] {
        try await apply(batch).map(\.result)
    }
}
