/// The highest id below which every dispatched row is done. Rows are started in id order but
/// finish in any order, so the checkpoint is just below the oldest row still in flight.
struct CheckpointTracker {
    private var inFlight: Set<Int64> = []
    private var lastDispatched: Int64

    init(after: Int64) { lastDispatched = after }

    mutating func dispatched(_ id: Int64) {
        inFlight.insert(id)
        lastDispatched = max(lastDispatched, id)
    }

    /// Marks a batch's rows done (they are handed to the writer together) and returns the
    /// checkpoint that holds once the batch is written.
    mutating func completed(_ ids: [Int64]) -> Int64 {
        for id in ids { inFlight.remove(id) }
        return checkpoint
    }

    /// Every dispatched row with an id up to this one is done.
    var checkpoint: Int64 { inFlight.min().map { $0 - 1 } ?? lastDispatched }
}
