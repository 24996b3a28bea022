/// The run loop's own bookkeeping: the backfill checkpoint, the rate limit and the requests in flight.
struct PipelineState {
    var checkpoints: CheckpointTracker
    /// Apple's deprecation headers are logged once per run.
    var deprecationLogged = false
    /// The requests in flight and the concurrency they may reach, shared with the rows' tasks.
    let gate: RequestGate
    private var pacer: RatePacer

    init(resumeAfter: Int64, maxRate: Double?, concurrency: Int, overload: OverloadThreshold) {
        checkpoints = CheckpointTracker(after: resumeAfter)
        pacer = RatePacer(perSecond: maxRate)
        gate = RequestGate(limit: ConcurrencyLimit(ceiling: concurrency, threshold: overload))
    }

    /// Waits for the next start slot under `--max-rate`.
    mutating func pace() async { await pacer.wait() }
}
