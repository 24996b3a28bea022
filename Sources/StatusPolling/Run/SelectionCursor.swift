import EntitlementCore

/// Hands the run its rows. On a store of one machine it lists the due ids once and reads the rows
/// a page at a time, so the selection is fixed when the run starts and at most one page of
/// receipts not handed out yet is held in memory. On a ``LeasingStore`` shared by several workers
/// it leases a page at a time instead, and renews the page's leases before a row is handed out
/// with less than half a lease left, so no row starts its verification on a lease about to expire.
struct SelectionCursor {
    private enum Source {
        case listed(store: any SubscriptionStore, ids: [Int64], nextPage: Int)
        case leased(store: any LeasingStore, runID: Int64, leasedAt: ContinuousClock.Instant)
    }

    private var source: Source
    /// A lease came back empty: no row is asked for again until ``awaitPeers(stopping:)``, so the
    /// last answers of a night do not each cost a lease query that finds nothing.
    private var leasedOut = false
    /// The highest id leased so far: the next lease looks after it first.
    private var lastLeased: Int64 = 0
    private let pageSize: Int
    /// The page's rows not handed out yet, the next one last: a row handed out is no longer held
    /// here, so its receipt lives only as long as its verification (a page kept whole held the
    /// receipts of every row of it already sent).
    private var waiting: [SubscriptionRow] = []

    /// Rows in the selection when the run started (a leasing store: the run's work not done yet).
    let total: Int
    /// Rows of the windows left out as fresh (``DueSelection/skippedFresh``).
    let skippedFresh: Int

    /// How often a worker with nothing free to lease looks again while others hold the rest.
    static let peerPollInterval: Duration = .seconds(1)

    static func open(store: any SubscriptionStore, configuration: PollRun.Configuration) async throws -> SelectionCursor {
        let pageSize = max(configuration.pageSize, 1)
        if case .leased(let leasing) = store.rowSharing, let runID = configuration.runID, !configuration.dryRun {
            let work = try await leasing.joinWork(runID: runID, selection: configuration.selection, nowMs: configuration.nowMs)
            // A lease covers a few rounds of the concurrency, not a whole page: small nights spread
            // over the workers, and a worker that dies strands few rows until their leases expire.
            let leasePage = min(pageSize, max(16, configuration.concurrency * 4))
            return SelectionCursor(
                source: .leased(store: leasing, runID: runID, leasedAt: .now), pageSize: leasePage, total: work.remaining, skippedFresh: work.skippedFresh)
        }
        let due = try await store.dueSelection(configuration.selection, nowMs: configuration.nowMs, after: configuration.resumeAfter)
        return SelectionCursor(source: .listed(store: store, ids: due.ids, nextPage: 0), pageSize: pageSize, total: due.ids.count, skippedFresh: due.skippedFresh)
    }

    private init(source: Source, pageSize: Int, total: Int, skippedFresh: Int) {
        self.source = source
        self.pageSize = pageSize
        self.total = total
        self.skippedFresh = skippedFresh
    }

    /// The next row, nil when none is left (a leasing store: none is free now).
    mutating func next() async throws -> SubscriptionRow? {
        switch source {
        case .listed(let store, let ids, let nextPage):
            while waiting.isEmpty {
                guard nextPage < ids.count else { return nil }
                let end = min(nextPage + pageSize, ids.count)
                waiting = try await store.subscriptions(ids: Array(ids[nextPage..<end])).reversed()
                source = .listed(store: store, ids: ids, nextPage: end)
            }
        case .leased(let store, let runID, let leasedAt):
            if !waiting.isEmpty, ContinuousClock.now - leasedAt > store.leaseDuration / 2 {
                let held = try await store.renewLeases(runID: runID, ids: waiting.reversed().map(\.id))
                waiting = waiting.filter { held.contains($0.id) }
                source = .leased(store: store, runID: runID, leasedAt: .now)
            }
            if waiting.isEmpty {
                guard !leasedOut, try await leaseNextPage(store, runID: runID) else {
                    leasedOut = true
                    return nil
                }
            }
        }
        return waiting.popLast()
    }

    /// Called when the run has nothing in flight and nothing unwritten: while other workers still
    /// hold rows of the shared work, waits for them and returns true as soon as a row is free again
    /// (a worker died and its lease expired); false when the work is done, on a store of one
    /// machine, or once `stopping` says so.
    mutating func awaitPeers(stopping: () -> Bool) async throws -> Bool {
        guard case .leased(let store, let runID, _) = source else { return false }
        while !stopping(), try await store.remainingWork(runID: runID) > 0 {
            if try await leaseNextPage(store, runID: runID) {
                leasedOut = false
                return true
            }
            try await Task.sleep(for: Self.peerPollInterval)
        }
        return false
    }

    private mutating func leaseNextPage(_ store: any LeasingStore, runID: Int64) async throws -> Bool {
        let leasedAt = ContinuousClock.now
        let page = try await store.lease(runID: runID, limit: pageSize, after: lastLeased)
        lastLeased = page.last?.id ?? lastLeased
        waiting = page.reversed()
        source = .leased(store: store, runID: runID, leasedAt: leasedAt)
        return !page.isEmpty
    }
}
