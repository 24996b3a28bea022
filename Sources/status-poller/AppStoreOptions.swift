import AppStoreBackends
import ArgumentParser
import PollerCommandLine
import StatusPolling

/// How to reach the App Store and how hard to try: shared by `run` and `backfill`.
struct AppStoreOptions: ParsableArguments {
    @Option(help: "The app's bundle identifier; answers for any other app are rejected.")
    var bundleId: String?

    @Option(help: "verifyReceipt production URL (default: Apple's).")
    var productionUrl: String?

    @Option(help: "verifyReceipt sandbox URL, used on status 21007 (default: Apple's).")
    var sandboxUrl: String?

    @Option(help: "File holding the App Store shared secret (else APPSTORE_SHARED_SECRET).")
    var sharedSecretFile: String?

    @Option(help: ArgumentHelp("Receipts verified at once, \(Limits.concurrency.lowerBound)…\(Limits.concurrency.upperBound) (default: \(PollRun.Configuration.defaultConcurrency))."))
    var concurrency: Int?

    @Option(help: ArgumentHelp("Attempts per receipt, the first included, \(RetryPolicy.allowedAttempts.lowerBound)…\(RetryPolicy.allowedAttempts.upperBound) (default: \(RetryPolicy.defaultMaxAttempts))."))
    var maxAttempts: Int?

    @Option(help: ArgumentHelp("Seconds before one request is abandoned, at most \(Limits.seconds(VerifyReceiptConfiguration.maxRequestTimeout)) (default: \(Limits.seconds(VerifyReceiptConfiguration.defaultRequestTimeout)))."))
    var requestTimeout: Double?

    @Option(help: ArgumentHelp("Stop the run (exit 3) when the App Store keeps failing: on or off (default: on)."))
    var circuitBreaker: OnOff?

    @Option(help: ArgumentHelp("Requests, and finished subscriptions, the circuit breaker looks back over, \(CircuitBreaker.allowedWindow.lowerBound)…\(CircuitBreaker.allowedWindow.upperBound) (default: \(CircuitBreaker.defaultWindow))."))
    var circuitBreakerWindow: Int?

    @Option(help: ArgumentHelp("Percent of those that must have failed with timeouts, 5xx, outage pages or retryable statuses to stop the run (default: \(Int(CircuitBreaker.defaultThreshold * 100)))."))
    var circuitBreakerThreshold: Double?

    @Option(help: ArgumentHelp("Percent of the last answers that may fail with 5xx, timeouts or retryable statuses before the concurrency is halved; below it they are retried as noise (default: \(Int(OverloadThreshold.defaultShare * 100)))."))
    var overloadThreshold: Double?

    @Option(help: ArgumentHelp("Answers the overload threshold looks back over, \(OverloadThreshold.allowedWindow.lowerBound)…\(OverloadThreshold.allowedWindow.upperBound) (default: \(OverloadThreshold.defaultWindow))."))
    var overloadWindow: Int?

    @Option(help: ArgumentHelp("Stop starting subscriptions after this long, as on SIGTERM (exit 4): 90s, 45m, 2h (default: no limit)."))
    var deadline: String?

    @Flag(help: "Allow an http:// App Store URL that is not on loopback (the receipts and the shared secret would travel in the clear).")
    var allowInsecureHttp = false

    /// The settings with the config file and the environment applied, validated.
    func resolve(_ settings: Settings) throws -> AppStoreSettings {
        let resolved = AppStoreSettings(
            bundleID: try settings.required(bundleId, "bundle_id", flag: "--bundle-id"),
            productionURL: settings.string(productionUrl, "production_url") ?? VerifyReceiptConfiguration.appleProductionURL,
            sandboxURL: settings.string(sandboxUrl, "sandbox_url") ?? VerifyReceiptConfiguration.appleSandboxURL,
            sharedSecretFile: settings.string(sharedSecretFile, "shared_secret_file"),
            concurrency: try settings.int(concurrency, "concurrency", default: PollRun.Configuration.defaultConcurrency),
            maxAttempts: try settings.int(maxAttempts, "max_attempts", default: RetryPolicy.defaultMaxAttempts),
            requestTimeout: try settings.double(requestTimeout, "request_timeout", default: VerifyReceiptConfiguration.defaultRequestTimeout.totalSeconds),
            circuitBreaker: try settings.onOff(circuitBreaker, "circuit_breaker", default: .on),
            circuitBreakerWindow: try settings.int(circuitBreakerWindow, "circuit_breaker_window", default: CircuitBreaker.defaultWindow),
            circuitBreakerThreshold: try settings.double(circuitBreakerThreshold, "circuit_breaker_threshold", default: CircuitBreaker.defaultThreshold * 100),
            overloadThreshold: try settings.double(overloadThreshold, "overload_threshold", default: OverloadThreshold.defaultShare * 100),
            overloadWindow: try settings.int(overloadWindow, "overload_window", default: OverloadThreshold.defaultWindow),
            deadline: try settings.string(deadline, "deadline").map { text in
                guard let duration = Duration(text: text) else {
                    throw usageError("--deadline must be a duration such as 90s, 45m or 2h (at most 7 days), got '\(text)'.")
                }
                return duration
            },
            allowInsecureHTTP: settings.flag(allowInsecureHttp, "allow_insecure_http"),
            proxy: try AppStoreSettings.proxy())
        try resolved.validate()
        return resolved
    }
}
