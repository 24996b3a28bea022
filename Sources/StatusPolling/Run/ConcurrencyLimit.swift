/// How many requests a run keeps in flight: the configured concurrency, halved when the App Store
/// asks to slow down (HTTP 429, a 5xx, a retryable status) and grown back by one for every
/// `current` answers that came without such a sign (additive increase, multiplicative decrease).
///
/// A cut waits until the answers already in flight at the last cut have come back, so one burst of
/// 503s halves the concurrency once, not once per request. Counted in answers, not seconds, so
/// the behaviour does not depend on the machine's speed.
struct ConcurrencyLimit {
    let ceiling: Int
    /// Requests that may be in flight now.
    private(set) var current: Int
    /// The lowest `current` reached during the run.
    private(set) var lowest: Int
    /// Answers that carried a sign to slow down.
    private(set) var throttled = 0
    private var answersSinceCut: Int
    private var calmAnswers = 0

    init(ceiling: Int) {
        self.ceiling = max(ceiling, 1)
        current = self.ceiling
        lowest = self.ceiling
        answersSinceCut = self.ceiling
    }

    mutating func record(throttled wasThrottled: Bool) {
        answersSinceCut += 1
        if wasThrottled {
            throttled += 1
            calmAnswers = 0
            guard answersSinceCut >= current, current > 1 else { return }
            current = max(1, current / 2)
            lowest = min(lowest, current)
            answersSinceCut = 0
        } else if current < ceiling {
            calmAnswers += 1
            if calmAnswers >= current {
                current += 1
                calmAnswers = 0
            }
        }
    }
}
