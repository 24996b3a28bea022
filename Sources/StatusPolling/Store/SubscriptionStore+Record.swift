import EntitlementCore

extension SubscriptionStore {
    /// Writes one successful verification in its own transaction.
    public func recordVerified(_ update: VerifiedUpdate) async throws -> VerifiedWriteResult {
        // A verified result always yields an outcome.
        try await write(ResultBatch([.verified(update)]))[0]!
    }

    /// Records one failed verification in its own transaction: bookkeeping only.
    public func recordFailure(_ failure: FailedVerification) async throws {
        _ = try await write(ResultBatch([.failed(failure)]))
    }
}
