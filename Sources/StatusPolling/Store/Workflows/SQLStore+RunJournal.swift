/// The run history's reads that do not depend on how a store shares work, on any ``SQLStore``.
/// (Opening, resuming and finishing runs are still each store's: `docs/design/STORE-SEAM.md`, step 4.)
extension RunJournal where Self: SQLStore {
    public func lastSuccessfulRunFinishedAt(mode: RunMode) async throws -> Int64? {
        try await firstRow(PollRunsSQL.lastSuccessFinishedAt(mode)) { row -> Int64? in try row.column() } ?? nil
    }
}
