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
