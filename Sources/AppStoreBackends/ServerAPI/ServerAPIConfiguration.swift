import X509

/// Where and how to reach the App Store Server API. Both base URLs are settings so that tests
/// and the simulator can stand in for Apple.
public struct ServerAPIConfiguration: Sendable {
    public static let appleProductionURL = "https://api.storekit.apple.com"
    public static let appleSandboxURL = "https://api.storekit-sandbox.apple.com"
    /// Requests per second unless configured (`--server-api-rate`): below Apple's 50.
    public static let defaultRate = 40
    /// Get Notification History's own limit (Apple's table: 50 per second), which a catch-up
    /// keeps unless `--server-api-rate` says otherwise: it reads pages one after another, so it
    /// never sends more than the limiter allows.
    public static let notificationHistoryRate = 50

    /// Asked first, as for verifyReceipt.
    public var productionURL: String
    /// Asked when production answers 4040010 (transaction id not found).
    public var sandboxURL: String
    public var credentials: ServerAPICredentials
    /// Apple's numeric app id: when given, an answer naming another `appAppleId` is refused.
    public var appAppleID: Int64?
    /// Roots a signed payload's chain may end in: Apple Root CA - G3, or test roots (loopback only).
    public var trustedRoots: [Certificate]
    /// Production's request budget per second; the sandbox gets a tenth, as Apple allows it.
    public var ratePerSecond: Int
    /// Set when workers of one database share `ratePerSecond` (PostgreSQL): each then sends its share.
    public var sharedRate: SharedRate? = nil
    /// Deadline for one request, connection included.
    public var requestTimeout: Duration
    /// When and how often to try again; 5000000 waits at least `longBackoff`.
    public var retry: RetryPolicy
    public var longBackoff: Duration
    /// Read every transaction of each chain with Get Transaction History (backfills) instead of
    /// the last one only.
    public var readHistory: Bool

    public init(
        productionURL: String = Self.appleProductionURL, sandboxURL: String = Self.appleSandboxURL, credentials: ServerAPICredentials,
        appAppleID: Int64? = nil, trustedRoots: [Certificate] = AppleRootCertificate.defaultRoots, ratePerSecond: Int = Self.defaultRate,
        requestTimeout: Duration = VerifyReceiptConfiguration.defaultRequestTimeout, retry: RetryPolicy = RetryPolicy(),
        longBackoff: Duration = .seconds(5), readHistory: Bool = false
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.credentials = credentials
        self.appAppleID = appAppleID
        self.trustedRoots = trustedRoots
        self.ratePerSecond = ratePerSecond
        self.requestTimeout = requestTimeout
        self.retry = retry
        self.longBackoff = longBackoff
        self.readHistory = readHistory
    }
}
