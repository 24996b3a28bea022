import EntitlementCore

/// Work shared by several workers, on any ``SQLStore`` that shares it (``SQLStore/workShare``):
/// nights opened once between them, rows taken by lease.
extension LeasingStore where Self: SQLStore {
    /// Workers share the work: a run leases its rows.
    public var rowSharing: RowSharing { workShare == nil ? .listed : .leased(self) }

    public var leaseDuration: Duration { workShare?.leaseDuration ?? .zero }

    /// A nightly run joins the latest night that started within ``WorkSharingSQL/nightSpan`` of
    /// its clock and has rows not done; otherwise it opens a night with the rows due at `nowMs`.
    /// Under an advisory lock, so workers starting together open one night between them.
    public func joinWork(runID: Int64, selection: RowSelection, nowMs: Int64) async throws -> JoinedWork {
        guard case .nightly(let windows) = selection else { return JoinedWork(remaining: try await remainingWork(runID: runID)) }
        return try await transaction { session in
            try await session.execute(WorkSharingSQL.nightLock)
            let open: Int64? = try await session.firstRow(WorkSharingSQL.openNight(runID: runID, nowMs: nowMs)) { try $0.column() }
            var skippedFresh = 0
            try await session.execute(WorkSharingSQL.join(runID, work: open ?? runID))
            if open == nil {
                skippedFresh = try await session.firstRow(WorkSharingSQL.openNight(runID, windows: windows, nowMs: nowMs)) { try $0.column() } ?? 0
            }
            let remaining: Int = try await session.firstRow(WorkSharingSQL.remaining(work: open ?? runID)) { try $0.column() } ?? 0
            try await session.execute(WorkSharingSQL.setTargets(runID, remaining))
            return JoinedWork(remaining: remaining, skippedFresh: skippedFresh)
        }
    }

    public func remainingWork(runID: Int64) async throws -> Int {
        guard let workID = try await firstRow(WorkSharingSQL.work(of: runID), { row -> Int64? in try row.column() }) ?? nil else { return 0 }
        return try await firstRow(WorkSharingSQL.remaining(work: workID)) { row -> Int in try row.column() } ?? 0
    }

    /// Leases rows after `after` first; when those run out, the rows before it that came free.
    public func lease(runID: Int64, limit: Int, after: Int64) async throws -> [SubscriptionRow] {
        let rows = try await lease(runID: runID, limit: limit, from: after)
        guard rows.count < limit, after > 0 else { return rows }
        return (rows + (try await lease(runID: runID, limit: limit - rows.count, from: 0))).sorted { $0.id < $1.id }
    }

    private func lease(runID: Int64, limit: Int, from after: Int64) async throws -> [SubscriptionRow] {
        guard let worker = workShare?.worker else { return [] }
        let lease = WorkSharingSQL.lease(runID: runID, worker: worker, limit: limit, after: after, leaseMs: leaseDuration.milliseconds)
        return try await transaction { session in
            for setting in WorkSharingSQL.leasePlanSettings { try await session.execute(setting) }
            return try await session.rows(lease) { try SubscriptionRowSQL.row(&$0) }
        }.sorted { $0.id < $1.id }
    }

    public func renewLeases(runID: Int64, ids: [Int64]) async throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        let renew = WorkSharingSQL.renew(runID: runID, ids: ids, leaseMs: leaseDuration.milliseconds)
        return Set(try await commit([renew], rowsOfLast: { row -> Int64 in try row.column() }))
    }
}
