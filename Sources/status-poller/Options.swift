import ArgumentParser
import Foundation
import Logging
import StatusPolling

/// How to reach the App Store and how hard to try: shared by `run` and `backfill`.
struct AppStoreOptions: ParsableArguments {
    @Option(help: "The app's bundle identifier; answers for any other app are rejected.")
    var bundleId: String

    @Option(help: "verifyReceipt production URL.")
    var productionUrl: String = VerifyReceiptConfiguration.appleProductionURL

    @Option(help: "verifyReceipt sandbox URL (used on status 21007).")
    var sandboxUrl: String = VerifyReceiptConfiguration.appleSandboxURL

    @Option(help: "File holding the App Store shared secret (else APPSTORE_SHARED_SECRET).")
    var sharedSecretFile: String?

    @Option(help: "Receipts verified at once (1…512).")
    var concurrency: Int = 8

    @Option(help: "Attempts per receipt, the first included (1…10).")
    var maxAttempts: Int = RetryPolicy().maxAttempts

    @Option(help: "Seconds before one request is abandoned.")
    var requestTimeout: Double = 10

    func validate() throws {
        guard (1...512).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 512, got \(concurrency).") }
        guard RetryPolicy.allowedAttempts.contains(maxAttempts) else {
            throw ValidationError("--max-attempts must be between 1 and 10, got \(maxAttempts).")
        }
        guard requestTimeout > 0, requestTimeout <= 300 else { throw ValidationError("--request-timeout must be between 0 and 300 seconds.") }
        guard !bundleId.isEmpty else { throw ValidationError("--bundle-id cannot be empty.") }
        for (flag, url) in [("--production-url", productionUrl), ("--sandbox-url", sandboxUrl)] {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw ValidationError("\(flag) must be an http(s) URL, got '\(url)'.")
            }
        }
    }

    func clientConfiguration(secret: SharedSecret) -> VerifyReceiptConfiguration {
        VerifyReceiptConfiguration(
            productionURL: productionUrl, sandboxURL: sandboxUrl, sharedSecret: secret,
            requestTimeout: .milliseconds(Int64(requestTimeout * 1000)),
            maxConnectionsPerHost: max(concurrency, 8),
            retry: RetryPolicy(maxAttempts: maxAttempts))
    }

    /// The settings recorded in the run history (never the secret).
    var recorded: [String: String] {
        ["bundle_id": bundleId, "production_url": productionUrl, "sandbox_url": sandboxUrl,
         "concurrency": String(concurrency), "max_attempts": String(maxAttempts), "request_timeout": String(requestTimeout)]
    }
}

/// What a run prints and writes besides the database.
struct OutputOptions: ParsableArguments {
    @Option(help: "Report format on stdout: text or json.")
    var report: ReportFormat = .text

    @Option(help: "Log level on stderr: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(help: "Log format on stderr: text (for people) or json (one object per line).")
    var logFormat: LogFormat = .text

    @Option(help: "Write Prometheus metrics (text format) to this file at the end of the run, for node_exporter's textfile collector.")
    var metricsFile: String?
}

enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// ISO 8601 with or without fractional seconds, or a plain date (midnight UTC).
enum ISO8601 {
    static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().year().month().day().parse(text)
    }

    static func milliseconds(_ text: String?) -> Int64 {
        let date = text.flatMap(parse) ?? Date()
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}

/// Log lines on stderr, so stdout holds only the report.
enum Logging {
    static func make(level: Logger.Level, format: LogFormat = .text) -> Logger {
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            case .json:
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
        var logger = Logger(label: "status-poller")
        logger.logLevel = level
        return logger
    }
}
