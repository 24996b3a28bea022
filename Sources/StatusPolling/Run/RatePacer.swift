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
