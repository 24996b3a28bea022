/// Results written together in one transaction: the run's writer collects them (by count and by
/// time) so that a commit, not a row, is the unit of cost. A crash loses at most the answers in
/// flight and one unflushed batch; the next run asks for those again.
public struct ResultBatch: Sendable, Equatable {
    /// One row's result.
    public enum Result: Sendable, Equatable {
        case verified(VerifiedUpdate)
        case failed(FailedVerification)
    }

    public var results: [Result]
    /// For a recorded run: every target with an id up to `through` is done once this batch is
    /// written, so a resumed backfill starts after it. Written in the batch's transaction.
    public var checkpoint: (runID: Int64, through: Int64)?

    public init(_ results: [Result], checkpoint: (runID: Int64, through: Int64)? = nil) {
        self.results = results
        self.checkpoint = checkpoint
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.results == rhs.results && lhs.checkpoint?.runID == rhs.checkpoint?.runID && lhs.checkpoint?.through == rhs.checkpoint?.through
    }
}
