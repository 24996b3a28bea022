import Logging

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The verifyReceipt client as the tests configure it: the shared secret they expect, short
/// backoffs so retries take milliseconds, and timeouts far above any stall of a busy machine.
enum VerifyReceiptTesting {
    /// A request timeout that must never fire: `Patience.bound`, far above the longest a loopback
    /// exchange has taken on a CI machine running the whole suite beside two builds (over 30 s for
    /// one over TLS through a CONNECT tunnel, over 120 s for a refused CONNECT). A test that needs a
    /// timeout to fire sets a short one, and only for requests the server never answers (`.never`),
    /// which no machine speed can make come in time.
    static let patientTimeout: Duration = Patience.bound
    /// The binary's `--request-timeout` for the same: the most it accepts (300 s); its default (10 s)
    /// is no margin at all.
    static let requestTimeoutOption = ["--request-timeout", "\(VerifyReceiptConfiguration.maxRequestTimeout.components.seconds)"]

    static func configuration(_ production: String, _ sandbox: String, attempts: Int = 4, timeout: Duration = patientTimeout) -> VerifyReceiptConfiguration {
        VerifyReceiptConfiguration(
            productionURL: production, sandboxURL: sandbox, sharedSecret: SharedSecret("shh-secret"),
            requestTimeout: timeout,
            retry: RetryPolicy(maxAttempts: attempts, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(40), maxRetryAfter: .milliseconds(300)))
    }

    /// The HTTP client of these tests. A connect on loopback can take over a second on a machine
    /// busy with builds, so the timeout is far above that; a refused connection fails at once anyway.
    static let http = KeepAliveHTTPClient.Configuration(connectTimeout: .seconds(30))
}

/// Asks rows whose receipt is in `receipts` through `them`, every other row through `others`. A
/// test whose server never answers some receipts gives those a client with a short timeout, which
/// must fire, and the rest a client whose timeout never fires: one timeout cannot be both short
/// enough to wait out and long enough for every prompt answer on a slow machine.
struct ReceiptRoutedSource: SubscriptionStatusSource {
    var receipts: Set<String>
    var them: any SubscriptionStatusSource
    var others: any SubscriptionStatusSource

    func status(of row: SubscriptionRow, logger: Logger) async throws -> StatusLookup {
        try await (receipts.contains(row.latestReceipt) ? them : others).status(of: row, logger: logger)
    }
}
