/// What a worker found when it joined the shared work of a ``LeasingStore``.
public struct JoinedWork: Sendable, Equatable {
    /// Rows of the work not done yet.
    public var remaining: Int
    /// Rows of the night's windows left out as fresh; counted by the worker that opened the night.
    public var skippedFresh: Int

    public init(remaining: Int, skippedFresh: Int = 0) {
        self.remaining = remaining
        self.skippedFresh = skippedFresh
    }
}
