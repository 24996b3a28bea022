import Foundation

/// The run history, on any ``SQLStore``: a backfill's targets are its run's own where one run has
/// the database to itself, and shared work (each worker's part a run of its own) where workers
/// share it (``SQLStore/workShare``).
extension RunJournal where Self: SQLStore {
    public func startRun(_ start: RunStart) async throws -> Int64 {
        try await commit([PollRunsSQL.insert(start, worker: workShare?.worker)], rowsOfLast: { row -> Int64 in try row.column() })[0]
    }

    public func startBackfill(_ start: RunStart, targets: BackfillTargets) async throws -> (runID: Int64, targets: Int) {
        let insert = PollRunsSQL.insert(start, worker: workShare?.worker), shared = workShare != nil
        return try await transaction { session in
            let runID: Int64 = try await session.rows(insert) { try $0.column() }[0]
            var count = 0
            for statement in PollRunsSQL.fixTargets(targets, runID: runID, shared: shared) {
                count = try await session.rows(statement) { row -> Int in try row.column() }.first ?? count
            }
            return (runID, count)
        }
    }

    public func resumableBackfill() async throws -> RunRecord? {
        try await firstRow(PollRunsSQL.resumable(dialect, shared: workShare != nil)) { try PollRunsSQL.record(&$0) }
    }

    public func resumeBackfill(_ backfill: RunRecord, start: RunStart) async throws -> Int64 {
        guard workShare != nil else {
            try await commit(PollRunsSQL.resume(backfill.id, start: start))
            return backfill.id
        }
        let insert = PollRunsSQL.insert(start, worker: workShare?.worker)
        return try await transaction { session in
            let runID: Int64 = try await session.rows(insert) { try $0.column() }[0]
            try await session.execute(PollRunsSQL.join(runID, backfill: backfill))
            return runID
        }
    }

    public func finishRun(_ runID: Int64, report: RunReport, status: RunStatus, checkpoint: Int64?) async throws {
        let finish = try PollRunsSQL.finish(
            dialect, runID: runID, report: report, status: status, checkpoint: checkpoint, finishedAtMs: Int64(Date().timeIntervalSince1970 * 1000))
        if workShare != nil {
            try await commit(finish, WorkSharingSQL.releaseLeases(of: runID))
        } else {
            try await commit(finish)
        }
    }

    public func lastSuccessfulRunFinishedAt(mode: RunMode) async throws -> Int64? {
        try await firstRow(PollRunsSQL.lastSuccessFinishedAt(mode)) { row -> Int64? in try row.column() } ?? nil
    }
}
