import ArgumentParser
import Foundation
import Logging
import SQLiteStore
import StatusPolling

extension StatusPoller {
    /// `status-poller run`: the nightly job.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify every subscription whose access may be changing and write back Apple's answer.",
            discussion: """
                The shared secret is read from the APPSTORE_SHARED_SECRET environment variable or from \
                --shared-secret-file, never from an argument.

                Exit codes: 0 every selected subscription verified; 1 the run finished but some failed \
                (their access is unchanged); 2 usage or configuration error; 3 run aborted (Apple answered \
                21004, or the database could not be read).
                """)

        @Option(help: "Path of the SQLite database (create it with `migrate`).")
        var database: String

        @Option(help: "The app's bundle identifier; answers for any other app are rejected.")
        var bundleId: String

        @Option(help: "The run's clock as ISO 8601 (e.g. 2026-11-22T03:00:00Z). Default: now.")
        var now: String?

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

        @Option(help: "Select rows that expired at most this many hours ago.")
        var expiredWithinHours: Double = 48

        @Option(help: "Select rows that expire within this many hours.")
        var expiringWithinHours: Double = 24

        @Flag(help: "Call Apple and report what would change, but write nothing.")
        var dryRun = false

        @Option(help: "Report format on stdout: text or json.")
        var report: ReportFormat = .text

        @Option(help: "Log level on stderr: trace, debug, info, notice, warning, error, critical.")
        var logLevel: Logger.Level = .info

        func validate() throws {
            guard (1...512).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 512, got \(concurrency).") }
            guard RetryPolicy.allowedAttempts.contains(maxAttempts) else {
                throw ValidationError("--max-attempts must be between 1 and 10, got \(maxAttempts).")
            }
            guard requestTimeout > 0, requestTimeout <= 300 else { throw ValidationError("--request-timeout must be between 0 and 300 seconds.") }
            guard expiredWithinHours >= 0, expiringWithinHours >= 0 else { throw ValidationError("selection windows cannot be negative.") }
            guard !bundleId.isEmpty else { throw ValidationError("--bundle-id cannot be empty.") }
            for (flag, url) in [("--production-url", productionUrl), ("--sandbox-url", sandboxUrl)] {
                guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                    throw ValidationError("\(flag) must be an http(s) URL, got '\(url)'.")
                }
            }
            if let now, ISO8601.parse(now) == nil {
                throw ValidationError("--now must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(now)'.")
            }
        }

        func run() async throws {
            let logger = Logging.make(level: logLevel)
            let secret = try SecretSource.read(file: sharedSecretFile)
            let store: SQLiteSubscriptionStore
            do {
                store = try SQLiteSubscriptionStore.open(path: database)
            } catch {
                throw usageError("\(error)")
            }
            let nowMs = now.flatMap(ISO8601.parse).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
                ?? Int64((Date().timeIntervalSince1970 * 1000).rounded())
            let clientConfiguration = VerifyReceiptConfiguration(
                productionURL: productionUrl, sandboxURL: sandboxUrl, sharedSecret: secret,
                requestTimeout: .milliseconds(Int64(requestTimeout * 1000)),
                maxConnectionsPerHost: max(concurrency, 8),
                retry: RetryPolicy(maxAttempts: maxAttempts))
            let runConfiguration = PollRun.Configuration(
                bundleID: bundleId, nowMs: nowMs,
                selection: SelectionWindows(
                    nearExpiryBefore: .milliseconds(Int64(expiredWithinHours * 3_600_000)),
                    nearExpiryAfter: .milliseconds(Int64(expiringWithinHours * 3_600_000))),
                concurrency: concurrency, dryRun: dryRun)
            let result = try await VerifyReceiptClient.withClient(clientConfiguration) { client in
                await PollRun(configuration: runConfiguration, store: store, client: client, logger: logger).run()
            }
            try? store.close()
            switch report {
            case .text: print(result.text())
            case .json: print(try result.json())
            }
            if result.exitCode != .success { throw ExitCode(result.exitCode.rawValue) }
        }
    }

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// ISO 8601 with or without fractional seconds.
enum ISO8601 {
    static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return try? fractional.parse(text)
    }
}

/// Log lines on stderr, so stdout holds only the report.
enum Logging {
    static func make(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "status-poller")
        logger.logLevel = level
        return logger
    }
}
