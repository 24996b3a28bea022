/// The rows a run covers, as its store found them when the run started.
public struct DueSelection: Sendable, Equatable {
    /// The rows to ask Apple about, in `id` order.
    public var ids: [Int64]
    /// Rows in a window left out because their Apple data is fresh (``SelectionWindows/freshWithin``):
    /// the run report's `skipped_fresh`.
    public var skippedFresh: Int

    public init(ids: [Int64] = [], skippedFresh: Int = 0) {
        self.ids = ids
        self.skippedFresh = skippedFresh
    }
}
