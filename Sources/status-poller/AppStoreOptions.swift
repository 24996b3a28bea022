import ArgumentParser
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

    @Option(help: ArgumentHelp("Seconds before one request is abandoned (default: \(Limits.seconds(VerifyReceiptConfiguration.defaultRequestTimeout)))."))
    var requestTimeout: Double?

    /// The settings with the config file and the environment applied, validated.
    func resolve(_ settings: Settings) throws -> AppStoreSettings {
        let resolved = AppStoreSettings(
            bundleID: try settings.required(bundleId, "bundle_id", flag: "--bundle-id"),
            productionURL: settings.string(productionUrl, "production_url") ?? VerifyReceiptConfiguration.appleProductionURL,
            sandboxURL: settings.string(sandboxUrl, "sandbox_url") ?? VerifyReceiptConfiguration.appleSandboxURL,
            sharedSecretFile: settings.string(sharedSecretFile, "shared_secret_file"),
            concurrency: try settings.int(concurrency, "concurrency", default: PollRun.Configuration.defaultConcurrency),
            maxAttempts: try settings.int(maxAttempts, "max_attempts", default: RetryPolicy.defaultMaxAttempts),
            requestTimeout: try settings.double(requestTimeout, "request_timeout", default: VerifyReceiptConfiguration.defaultRequestTimeout.totalSeconds))
        try resolved.validate()
        return resolved
    }
}
