import AppStoreBackends
import Foundation
import PollerCommandLine
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
    var circuitBreaker: OnOff
    var circuitBreakerWindow: Int
    /// Percent.
    var circuitBreakerThreshold: Double
    /// Percent.
    var overloadThreshold: Double
    var overloadWindow: Int
    var deadline: Duration?
    var allowInsecureHTTP: Bool
    /// The egress proxy from `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (nil: direct connections).
    var proxy: ProxyConfiguration? = nil

    func validate() throws {
        guard Limits.concurrency.contains(concurrency) else {
            throw usageError("--concurrency must be between \(Limits.concurrency.lowerBound) and \(Limits.concurrency.upperBound), got \(concurrency).")
        }
        guard RetryPolicy.allowedAttempts.contains(maxAttempts) else {
            throw usageError("--max-attempts must be between \(RetryPolicy.allowedAttempts.lowerBound) and \(RetryPolicy.allowedAttempts.upperBound), got \(maxAttempts).")
        }
        let maxTimeout = VerifyReceiptConfiguration.maxRequestTimeout.totalSeconds
        guard requestTimeout > 0, requestTimeout <= maxTimeout else { throw usageError("--request-timeout must be between 0 and \(Limits.seconds(VerifyReceiptConfiguration.maxRequestTimeout)) seconds.") }
        guard CircuitBreaker.allowedWindow.contains(circuitBreakerWindow) else {
            throw usageError("--circuit-breaker-window must be between \(CircuitBreaker.allowedWindow.lowerBound) and \(CircuitBreaker.allowedWindow.upperBound) subscriptions, got \(circuitBreakerWindow).")
        }
        guard circuitBreakerThreshold > 0, circuitBreakerThreshold <= 100 else {
            throw usageError("--circuit-breaker-threshold is a percentage above 0 and at most 100, got \(circuitBreakerThreshold).")
        }
        guard overloadThreshold > 0, overloadThreshold <= 100 else {
            throw usageError("--overload-threshold is a percentage above 0 and at most 100, got \(overloadThreshold).")
        }
        guard OverloadThreshold.allowedWindow.contains(overloadWindow) else {
            throw usageError("--overload-window must be between \(OverloadThreshold.allowedWindow.lowerBound) and \(OverloadThreshold.allowedWindow.upperBound) answers, got \(overloadWindow).")
        }
        for (flag, url) in [("--production-url", productionURL), ("--sandbox-url", sandboxURL)] {
            _ = try Self.checkedHost(flag, url, allowInsecureHTTP: allowInsecureHTTP, carrying: "receipts and the shared secret")
        }
    }

    /// An App Store URL's host, once the URL is http(s) and, when plain http, on loopback or
    /// allowed: `carrying` says what would travel in the clear.
    static func checkedHost(_ flag: String, _ url: String, allowInsecureHTTP: Bool, carrying: String) throws -> String {
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), let host = parsed.host, !host.isEmpty else {
            throw usageError("\(flag) must be an http(s) URL, got '\(url)'.")
        }
        if parsed.scheme == "http", !isLoopback(host), !allowInsecureHTTP {
            throw usageError("""
                \(flag) is http:// on \(host), which is not loopback: \(carrying) would travel unencrypted. \
                Use https://, or pass --allow-insecure-http if this is really meant (e.g. a proxy on a trusted network).
                """)
        }
        return host
    }

    /// Plain HTTP is fine to a simulator or a proxy on this machine, and nowhere else by default.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    /// The circuit breaker as configured (nil: off).
    var breaker: CircuitBreaker? {
        circuitBreaker == .off ? nil : CircuitBreaker(window: circuitBreakerWindow, threshold: circuitBreakerThreshold / 100)
    }

    /// When transient failures halve the concurrency.
    var overload: OverloadThreshold { OverloadThreshold(window: overloadWindow, share: overloadThreshold / 100) }

    func clientConfiguration(secret: SharedSecret) -> VerifyReceiptConfiguration {
        VerifyReceiptConfiguration(
            productionURL: productionURL, sandboxURL: sandboxURL, sharedSecret: secret,
            requestTimeout: .milliseconds(Int64(requestTimeout * 1000)),
            retry: RetryPolicy(maxAttempts: maxAttempts))
    }

    /// One pool of kept-alive connections for the job, as large as its concurrency (8 at least),
    /// through the egress proxy when one is set.
    var httpConfiguration: KeepAliveHTTPClient.Configuration {
        KeepAliveHTTPClient.Configuration(maxIdleConnectionsPerEndpoint: max(concurrency, 8), proxy: proxy)
    }

    /// The proxy settings of `environment`; a malformed one is a usage error (exit 2) naming the
    /// variable, never its password.
    static func proxy(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ProxyConfiguration? {
        do {
            return try ProxyConfiguration.fromEnvironment(environment)
        } catch {
            throw usageError("\(error).")
        }
    }

    /// How the run's options and logs name the proxies: `host:port` only, never the credentials.
    var proxySummary: String? {
        guard let proxy else { return nil }
        let parts = [proxy.https.map { "https via \($0)" }, proxy.http.map { "http via \($0)" }].compactMap { $0 }
        return parts.joined(separator: ", ") + (proxy.noProxy.count == 0 ? "" : ", NO_PROXY \(proxy.noProxy.count) entries")
    }

    /// The settings recorded in the run history (never the secret).
    var recorded: [String: String] {
        ["bundle_id": bundleID, "production_url": productionURL, "sandbox_url": sandboxURL,
         "concurrency": String(concurrency), "max_attempts": String(maxAttempts), "request_timeout": String(requestTimeout),
         "circuit_breaker": circuitBreaker == .off ? "off" : "\(circuitBreakerWindow) rows at \(circuitBreakerThreshold) %",
         "overload": "\(overloadThreshold) % of \(overloadWindow) answers",
         "deadline": deadline.map { "\(Limits.seconds($0)) s" } ?? "none", "allow_insecure_http": String(allowInsecureHTTP),
         "proxy": proxySummary ?? "none"]
    }
}
