/// The run loop's own bookkeeping: the backfill checkpoint, the rate limit and the concurrency.
struct PipelineState {
    var checkpoints: CheckpointTracker
    /// Apple's deprecation headers are logged once per run.
    var deprecationLogged = false
    /// How many requests may be in flight now.
    var limit: ConcurrencyLimit
    private var pacer: RatePacer

    init(resumeAfter: Int64, maxRate: Double?, concurrency: Int) {
        checkpoints = CheckpointTracker(after: resumeAfter)
        pacer = RatePacer(perSecond: maxRate)
        limit = ConcurrencyLimit(ceiling: concurrency)
    }

    /// Waits for the next start slot under `--max-rate`.
    mutating func pace() async { await pacer.wait() }
}

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

/// Spaces row starts evenly at `perSecond`; with no rate it never waits.
struct RatePacer {
    let interval: Duration?
    private var next: ContinuousClock.Instant?

    init(perSecond: Double?) {
        interval = perSecond.map { .microseconds(Int64(1_000_000 / max($0, 0.001))) }
    }

    mutating func wait() async {
        guard let interval else { return }
        let now = ContinuousClock.now
        let slot = max(next ?? now, now)
        next = slot + interval
        if slot > now { try? await Task.sleep(until: slot, clock: .continuous) }
    }
}
