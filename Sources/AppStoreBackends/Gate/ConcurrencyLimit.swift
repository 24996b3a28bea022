/// How many requests a run keeps in flight: the configured concurrency, halved on overload and
/// grown back by one per `current` answers once the store is calm again (additive increase,
/// multiplicative decrease).
///
/// Overload is an explicit sign (HTTP 429, `Retry-After`), or a share of transient failures above
/// ``OverloadThreshold/share`` over the last ``OverloadThreshold/window`` answers. A few 5xx or
/// retryable statuses in a hundred are noise: they are retried, and the limit does not move. Each
/// kind of cut waits out what it reacts to: a 429 cuts once per round of answers that were in flight
/// at the last cut (one burst of 429s halves once), a high share once per window (the answers that
/// caused one cut must leave the window before they cause another). Counted in answers, not
/// seconds, so the behaviour does not depend on the machine's speed.
///
/// A high share of failures takes the limit down to an eighth of the ceiling, no lower: a store
/// failing most requests is asked gently, but a night still ends (the circuit breaker stops one
/// that only fails). Only an explicit 429 takes it down to one request.
package struct ConcurrencyLimit {
    let ceiling: Int
    let threshold: OverloadThreshold
    /// The lowest a share of failures can take the limit.
    let shareFloor: Int
    /// Requests that may be in flight now.
    package private(set) var current: Int
    /// The lowest `current` reached during the run.
    package private(set) var lowest: Int
    /// Answers that failed in a way that may pass or asked to slow down.
    package private(set) var throttled = 0
    /// Times the concurrency was halved.
    private(set) var cuts = 0
    /// The last `window` answers, true for a transient failure or an overload; a ring.
    private var recent: [Bool] = []
    private var oldest = 0
    private var failuresInWindow = 0
    /// Answers since the last cut, and the requests that were in flight when it was made.
    private var answersSinceCut: Int
    private var roundAtCut: Int
    /// Answers since the limit last changed or the store last asked to slow down.
    private var answersSinceChange = 0

    package init(ceiling: Int, threshold: OverloadThreshold = OverloadThreshold()) {
        self.ceiling = max(ceiling, 1)
        self.threshold = threshold
        shareFloor = max(1, self.ceiling / 8)
        current = self.ceiling
        lowest = self.ceiling
        answersSinceCut = max(self.ceiling, threshold.window)
        roundAtCut = self.ceiling
        recent.reserveCapacity(threshold.window)
    }

    /// True while more than the threshold's share of the last `window` answers failed transiently.
    var isOverloaded: Bool {
        recent.count == threshold.window && Double(failuresInWindow) > threshold.share * Double(threshold.window)
    }

    /// The share of transient failures among the answers in the window (0 before any answer).
    var transientShare: Double { recent.isEmpty ? 0 : Double(failuresInWindow) / Double(recent.count) }

    mutating func record(_ signal: AnswerSignal) {
        answersSinceCut += 1
        answersSinceChange += 1
        remember(failed: signal != .calm)
        if signal != .calm { throttled += 1 }
        switch signal {
        case .overload:
            answersSinceChange = 0
            if answersSinceCut >= roundAtCut { cut(floor: 1) }
        case .transient where isOverloaded && answersSinceCut >= threshold.window:
            cut(floor: shareFloor)
        case .calm, .transient:
            guard current < ceiling, !isOverloaded, answersSinceChange >= current else { return }
            current += 1
            answersSinceChange = 0
        }
    }

    /// Halves the limit, down to `floor`; at the floor already, nothing changes.
    private mutating func cut(floor: Int) {
        guard current > floor else { return }
        roundAtCut = current
        answersSinceCut = 0
        answersSinceChange = 0
        current = max(floor, current / 2)
        lowest = min(lowest, current)
        cuts += 1
    }

    private mutating func remember(failed: Bool) {
        if recent.count < threshold.window {
            recent.append(failed)
        } else {
            if recent[oldest] { failuresInWindow -= 1 }
            recent[oldest] = failed
            oldest = (oldest + 1) % threshold.window
        }
        if failed { failuresInWindow += 1 }
    }
}
