@testable import StatusPolling

/// The verifyReceipt client as the tests configure it: the shared secret they expect, short
/// backoffs so retries take milliseconds, and timeouts far above any stall of a busy machine.
enum VerifyReceiptTesting {
    static func configuration(_ production: String, _ sandbox: String, attempts: Int = 4, timeout: Duration = .seconds(30)) -> VerifyReceiptConfiguration {
        VerifyReceiptConfiguration(
            productionURL: production, sandboxURL: sandbox, sharedSecret: SharedSecret("shh-secret"),
            requestTimeout: timeout,
            retry: RetryPolicy(maxAttempts: attempts, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(40), maxRetryAfter: .milliseconds(300)))
    }

    /// The HTTP client of these tests. A connect on loopback can take over a second on a machine
    /// busy with builds, so the timeout is far above that; a refused connection fails at once anyway.
    static let http = KeepAliveHTTPClient.Configuration(connectTimeout: .seconds(30))
}
