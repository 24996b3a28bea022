/// Lists the due ids once, then reads the rows a page at a time, so the selection is fixed when
/// the run starts and at most one page of receipts is held in memory.
struct SelectionCursor {
    let store: any SubscriptionStore
    let pageSize: Int
    private let ids: [Int64]
    private var nextPage = 0
    private var page: [SubscriptionRow] = []
    private var index = 0

    /// Rows in the selection when the run started.
    var total: Int { ids.count }

    static func open(store: any SubscriptionStore, configuration: PollRun.Configuration) async throws -> SelectionCursor {
        let ids = try await store.dueSubscriptionIDs(configuration.selection, nowMs: configuration.nowMs, after: configuration.resumeAfter)
        return SelectionCursor(store: store, pageSize: max(configuration.pageSize, 1), ids: ids)
    }

    private init(store: any SubscriptionStore, pageSize: Int, ids: [Int64]) {
        self.store = store
        self.pageSize = pageSize
        self.ids = ids
    }

    mutating func next() async throws -> SubscriptionRow? {
        while index == page.count {
            guard nextPage < ids.count else { return nil }
            let end = min(nextPage + pageSize, ids.count)
            page = try await store.subscriptions(ids: Array(ids[nextPage..<end]))
            nextPage = end
            index = 0
        }
        defer { index += 1 }
        return page[index]
    }
}
