
/// Where and how to reach verifyReceipt. Both URLs are settings so that tests and the simulator
/// can stand in for Apple.
public struct VerifyReceiptConfiguration: Sendable {
    /// Apple's production endpoint.
    public static let appleProductionURL = "https://buy.itunes.apple.com/verifyReceipt"
    /// Apple's sandbox endpoint.
    public static let appleSandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"

    /// The request deadline unless configured (`--request-timeout`).
    public static let defaultRequestTimeout: Duration = .seconds(10)
    /// The longest per-request deadline a run accepts.
    public static let maxRequestTimeout: Duration = .seconds(300)

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
