/// Stops a run that is only hammering an App Store in an outage.
///
/// It watches the last `window` finished rows; once that many have finished and at least
/// `threshold` of them failed in a way that may pass (a timeout, a refused connection, a 5xx, an
/// outage page, a status Apple says to retry — ``VerificationFailure/isTransient``), it trips: the
/// run starts no new row and ends with exit 3. Failures that belong to a row (a receipt of another
/// app, a chain owned by another user) never count: they say nothing about the store. Rows that
/// were not reached keep their columns, and the next run selects them as usual.
public struct CircuitBreaker: Sendable, Equatable {
    /// Finished rows the breaker looks back over, unless configured.
    public static let defaultWindow = 50
    /// The windows a run accepts (finished subscriptions).
    public static let allowedWindow = 1...10_000
    /// The share of transient failures among them that trips it, unless configured.
    public static let defaultThreshold = 0.8

    /// Rows looked back over; the breaker never trips before this many have finished.
    public var window: Int
    /// The share (0 < threshold ≤ 1) of those rows that must have failed transiently.
    public var threshold: Double

    public init(window: Int = Self.defaultWindow, threshold: Double = Self.defaultThreshold) {
        self.window = window
        self.threshold = threshold
    }

    /// What the breaker has seen so far in one run.
    struct Record {
        let breaker: CircuitBreaker
        /// The last `window` rows: the transient failure's reason, or nil for any other outcome.
        private var recent: [VerificationFailure.Reason?] = []
        private var next = 0

        init(_ breaker: CircuitBreaker) { self.breaker = breaker }

        /// Records one finished row; returns why the breaker trips, or nil while it holds.
        mutating func record(_ failure: VerificationFailure?) -> String? {
            let entry = failure.flatMap { $0.isTransient ? $0.reason : nil }
            if recent.count < breaker.window {
                recent.append(entry)
            } else {
                recent[next] = entry
                next = (next + 1) % breaker.window
            }
            guard recent.count == breaker.window else { return nil }
            let transient = recent.compactMap { $0 }
            guard Double(transient.count) >= breaker.threshold * Double(breaker.window) else { return nil }
            let mix = Dictionary(grouping: transient, by: { $0 }).mapValues(\.count)
                .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
            return "circuit breaker: \(transient.count) of the last \(breaker.window) subscriptions failed in a way that may pass (\(mix)); "
                + "the App Store looks unavailable, so no more were asked. Nothing was taken away: rows not reached keep their columns "
                + "and the next run selects them as usual (a backfill continues with `--resume`)"
        }
    }
}
