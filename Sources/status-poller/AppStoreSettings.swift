import Foundation
import StatusPolling

/// `AppStoreOptions` after the config file and the environment.
struct AppStoreSettings {
    var bundleID: String
    var productionURL: String
    var sandboxURL: String
    var sharedSecretFile: String?
    var concurrency: Int
    var maxAttempts: Int
    var requestTimeout: Double

    func validate() throws {
        guard Limits.concurrency.contains(concurrency) else {
            throw usageError("--concurrency must be between \(Limits.concurrency.lowerBound) and \(Limits.concurrency.upperBound), got \(concurrency).")
        }
        guard RetryPolicy.allowedAttempts.contains(maxAttempts) else {
            throw usageError("--max-attempts must be between \(RetryPolicy.allowedAttempts.lowerBound) and \(RetryPolicy.allowedAttempts.upperBound), got \(maxAttempts).")
        }
        guard requestTimeout > 0, requestTimeout <= 300 else { throw usageError("--request-timeout must be between 0 and 300 seconds.") }
        for (flag, url) in [("--production-url", productionURL), ("--sandbox-url", sandboxURL)] {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw usageError("\(flag) must be an http(s) URL, got '\(url)'.")
            }
        }
    }

    func clientConfiguration(secret: SharedSecret) -> VerifyReceiptConfiguration {
        VerifyReceiptConfiguration(
            productionURL: productionURL, sandboxURL: sandboxURL, sharedSecret: secret,
            requestTimeout: .milliseconds(Int64(requestTimeout * 1000)),
            retry: RetryPolicy(maxAttempts: maxAttempts))
    }

    /// One pool of kept-alive connections for the job, as large as its concurrency (8 at least).
    var httpConfiguration: KeepAliveHTTPClient.Configuration {
        KeepAliveHTTPClient.Configuration(maxIdleConnectionsPerEndpoint: max(concurrency, 8))
    }

    /// The settings recorded in the run history (never the secret).
    var recorded: [String: String] {
        ["bundle_id": bundleID, "production_url": productionURL, "sandbox_url": sandboxURL,
         "concurrency": String(concurrency), "max_attempts": String(maxAttempts), "request_timeout": String(requestTimeout)]
    }
}
