/// What retention needs from a store: delete a batch of a table's old rows, oldest first, with
/// the rows handed out first as JSON for the archive, in the delete's transaction.
public protocol TrailRetention: Sendable {
    /// Deletes at most `limit` rows of `table` older than `cutoffMs` that nothing keeps, and
    /// returns how many. With `archive`, the rows go to it as JSON objects, one per row, before the
    /// delete commits (a failure to archive deletes nothing).
    func prune(
        _ table: RetainedTable, olderThan cutoffMs: Int64, limit: Int, archive: (@Sendable ([String]) async throws -> Void)?
    ) async throws -> Int
}
