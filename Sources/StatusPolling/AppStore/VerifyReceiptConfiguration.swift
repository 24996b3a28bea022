
/// Where and how to reach verifyReceipt. Both URLs are settings so that tests and the simulator
/// can stand in for Apple.
public struct VerifyReceiptConfiguration: Sendable {
    /// Apple's production endpoint.
    public static let appleProductionURL = "https://buy.itunes.apple.com/verifyReceipt"
    /// Apple's sandbox endpoint.
    public static let appleSandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"

    /// The request deadline unless configured (`--request-timeout`).
    public static let defaultRequestTimeout: Duration = .seconds(10)

    /// Tried first for every receipt, as Apple requires.
    public var productionURL: String
    /// Tried when production answers 21007 (a sandbox receipt, e.g. from App Review or TestFlight).
    public var sandboxURL: String
    /// The app's shared secret, sent as `password`.
    public var sharedSecret: SharedSecret
    /// `exclude-old-transactions`: only the latest renewal of each subscription comes back.
    public var excludeOldTransactions: Bool
    /// Deadline for one request, connection included. Apple publishes none.
    public var requestTimeout: Duration
    /// When and how often to try again.
    public var retry: RetryPolicy

    public init(
        productionURL: String = Self.appleProductionURL,
        sandboxURL: String = Self.appleSandboxURL,
        sharedSecret: SharedSecret,
        excludeOldTransactions: Bool = true,
        requestTimeout: Duration = Self.defaultRequestTimeout,
        retry: RetryPolicy = RetryPolicy()
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.sharedSecret = sharedSecret
        self.excludeOldTransactions = excludeOldTransactions
        self.requestTimeout = requestTimeout
        self.retry = retry
    }
}

/// The App Store shared secret. Its description is redacted so that it cannot reach a log line,
/// a report or an error message by accident.
public struct SharedSecret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; read it only to build the request body.
    public let value: String
    public init(_ value: String) { self.value = value }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}

/// Retries per receipt: exponential backoff with full jitter, so a receipt that keeps failing costs
/// seconds, not minutes, and many failing receipts do not retry in lockstep.
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

    public init(
        maxAttempts: Int = 4, initialBackoff: Duration = .milliseconds(500),
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
