/// Retries per receipt: exponential backoff with full jitter, so a receipt that keeps failing costs
/// seconds, not minutes, and many failing receipts do not retry in lockstep.
///
/// The first wait is short (≤ 0.1 s): a row backing off holds no request slot, another row's
/// request takes it, so the backoff does not lower the load on the store (the run's concurrency
/// does that, on overload); it only spaces the attempts of one receipt, and every long wait would
/// add to the end of the night.
public struct RetryPolicy: Sendable {
    /// Attempts per receipt, the first included (1…10).
    public var maxAttempts: Int
    /// The backoff ceiling before the first retry; each further retry doubles it.
    public var initialBackoff: Duration
    /// The largest backoff ceiling.
    public var maxBackoff: Duration
    /// The longest `Retry-After` honoured; a longer one is cut to this.
    public var maxRetryAfter: Duration

    public static let allowedAttempts = 1...10
    /// Attempts per receipt unless configured (`--max-attempts`).
    public static let defaultMaxAttempts = 4

    public init(
        maxAttempts: Int = Self.defaultMaxAttempts, initialBackoff: Duration = .milliseconds(100),
        maxBackoff: Duration = .seconds(4), maxRetryAfter: Duration = .seconds(10)
    ) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.maxRetryAfter = maxRetryAfter
    }

    /// The wait before attempt `attempt + 1`, given a uniform draw `jitter` in [0, 1) and the
    /// server's `Retry-After` if it sent one.
    public func backoff(afterAttempt attempt: Int, jitter: Double, retryAfter: Duration?) -> Duration {
        let exponent = min(max(attempt - 1, 0), 20)
        let ceiling = min(maxBackoff, initialBackoff * (1 << exponent))
        let jittered = ceiling * min(max(jitter, 0), 1)
        guard let retryAfter else { return jittered }
        return max(jittered, min(retryAfter, maxRetryAfter))
    }
}
