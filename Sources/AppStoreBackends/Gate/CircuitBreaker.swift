import EntitlementCore

/// Stops a run that is only hammering an App Store in an outage.
///
/// It trips once at least `threshold` of the last `window` **requests** failed in a way that may
/// pass (a timeout, a refused connection, a 5xx, an outage page, a status Apple says to retry), or
/// of the last `window` **finished rows** (``VerificationFailure/isTransient``). Requests bound
/// what an outage costs: the run's ``RequestGate`` counts each answer as it comes back and closes
/// the moment the rule holds, so the store receives at most `window` answers plus the requests
/// then in flight — counted in rows, a row's retries and every row in flight would be sent first.
/// Rows catch what requests leave out: an answer asking to slow down (429, `Retry-After`) is the
/// concurrency's business and not counted per request, but a row that ends on one counts.
///
/// Once tripped, no request leaves (retries of rows in flight included) and the run ends with
/// exit 3. Failures that belong to a row (a receipt of another app, a chain owned by another user)
/// never count: they say nothing about the store. Rows that were not reached or not finished keep
/// their columns, and the next run selects them as usual.
public struct CircuitBreaker: Sendable, Equatable {
    /// Requests (and finished rows) the breaker looks back over, unless configured.
    public static let defaultWindow = 50
    /// The windows a run accepts.
    public static let allowedWindow = 1...10_000
    /// The share of transient failures among them that trips it, unless configured.
    public static let defaultThreshold = 0.8

    /// Requests, and rows, looked back over; neither count trips before this many.
    public var window: Int
    /// The share (0 < threshold ≤ 1) of those that must have failed transiently.
    public var threshold: Double

    public init(window: Int = Self.defaultWindow, threshold: Double = Self.defaultThreshold) {
        self.window = window
        self.threshold = threshold
    }

    /// What the breaker has seen so far in one run, of one kind: requests or finished rows.
    package struct Record {
        let breaker: CircuitBreaker
        /// What is counted, as the message names it: "requests" or "subscriptions".
        let counted: String
        /// The last `window` entries: the transient failure's reason, or nil for any other outcome.
        private var recent: [VerificationFailure.Reason?] = []
        private var next = 0
        private var transient = 0

        package init(_ breaker: CircuitBreaker, counting counted: String = "subscriptions") {
            self.breaker = breaker
            self.counted = counted
        }

        /// Records one finished row; returns why the breaker trips, or nil while it holds.
        package mutating func record(_ failure: VerificationFailure?) -> String? {
            record(transient: failure.flatMap { $0.isTransient ? $0.reason : nil })
        }

        /// Records one answer: the reason of a failure that may pass, nil for any other. Returns
        /// why the breaker trips, or nil while it holds.
        package mutating func record(transient reason: VerificationFailure.Reason?) -> String? {
            if recent.count < breaker.window {
                recent.append(reason)
            } else {
                if recent[next] != nil { transient -= 1 }
                recent[next] = reason
                next = (next + 1) % breaker.window
            }
            if reason != nil { transient += 1 }
            guard recent.count == breaker.window, Double(transient) >= breaker.threshold * Double(breaker.window) else { return nil }
            let mix = Dictionary(grouping: recent.compactMap { $0 }, by: { $0 }).mapValues(\.count)
                .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
            return "circuit breaker: \(transient) of the last \(breaker.window) \(counted) failed in a way that may pass (\(mix)); "
                + "the App Store looks unavailable, so no more were asked. Nothing was taken away: rows not reached keep their columns "
                + "and the next run selects them as usual (a backfill continues with `--resume`)"
        }
    }
}
