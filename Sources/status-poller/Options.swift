import ArgumentParser
import Configuration
import Foundation
import Logging
import SQLiteStore
import SystemPackage
import StatusPolling

/// The database and the config file: every command takes both.
///
/// Where settings come from, highest first: an option on the command line, an environment variable
/// (`STATUS_POLLER_` + the key in upper case), the JSON config file (`--config` or
/// `STATUS_POLLER_CONFIG`), then the built-in default.
struct StoreOptions: ParsableArguments {
    @Option(help: "Path of the SQLite database (else `database` in the config file, or STATUS_POLLER_DATABASE).")
    var database: String?

    @Option(help: "JSON config file for settings that do not change per run (else STATUS_POLLER_CONFIG).")
    var config: String?

    /// The environment and the file, in that order.
    func settings(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> Settings {
        let environmentProvider = EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "status_poller")
        guard let path = config ?? environment["STATUS_POLLER_CONFIG"] else { return Settings(reader: ConfigReader(provider: environmentProvider)) }
        guard FileManager.default.isReadableFile(atPath: path) else { throw usageError("cannot read the config file \(path).") }
        do {
            let file = try await FileProvider<JSONSnapshot>(filePath: FilePath(path))
            return Settings(reader: ConfigReader(providers: [environmentProvider, file]))
        } catch {
            throw usageError("the config file \(path) is not a JSON object of settings: \(error)")
        }
    }

    /// The database path, from the option, the environment or the config file.
    func databasePath(_ settings: Settings) throws -> String {
        try settings.required(database, "database", flag: "--database")
    }

    /// Opens the migrated database (a usage error, exit 2, when it cannot), runs `body`, closes it.
    func withStore<T>(_ settings: Settings, _ body: (SQLiteSubscriptionStore, String) async throws -> T) async throws -> T {
        let path = try databasePath(settings)
        let store = try openStore(path)
        defer { try? store.close() }
        return try await body(store, path)
    }
}

/// Opens a migrated database. A locked one is transient (exit 3, the store unreachable for this
/// run); a missing, unmigrated or unreadable one is a configuration error (exit 2). Both say what to do.
func openStore(_ path: String) throws -> SQLiteSubscriptionStore {
    do {
        return try SQLiteSubscriptionStore.open(path: path)
    } catch let error as StoreError {
        if case .busy = error {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(RunExitCode.aborted.rawValue)
        }
        throw usageError("\(error)")
    } catch {
        throw usageError("\(error)")
    }
}

/// Reads one setting with the documented precedence and a clear error for a bad value.
struct Settings {
    let reader: ConfigReader

    func string(_ option: String?, _ key: String) -> String? {
        option ?? reader.string(forKey: ConfigKey(key))
    }

    func required(_ option: String?, _ key: String, flag: String) throws -> String {
        guard let value = string(option, key), !value.isEmpty else {
            throw usageError("\(flag) is required (or \(key) in the config file, or STATUS_POLLER_\(key.uppercased())).")
        }
        return value
    }

    func int(_ option: Int?, _ key: String, default value: Int) throws -> Int {
        if let option { return option }
        if let number = reader.int(forKey: ConfigKey(key)) { return number }
        guard let text = reader.string(forKey: ConfigKey(key)) else { return value }
        guard let number = Int(text) else { throw usageError("\(key) must be a whole number, got '\(text)'.") }
        return number
    }

    func double(_ option: Double?, _ key: String, default value: Double) throws -> Double {
        if let option { return option }
        if let number = reader.double(forKey: ConfigKey(key)) { return number }
        if let number = reader.int(forKey: ConfigKey(key)) { return Double(number) }
        guard let text = reader.string(forKey: ConfigKey(key)) else { return value }
        guard let number = Double(text) else { throw usageError("\(key) must be a number, got '\(text)'.") }
        return number
    }
}

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

    @Option(help: "Receipts verified at once, 1…512 (default: 8).")
    var concurrency: Int?

    @Option(help: "Attempts per receipt, the first included, 1…10 (default: 4).")
    var maxAttempts: Int?

    @Option(help: "Seconds before one request is abandoned (default: 10).")
    var requestTimeout: Double?

    /// The settings with the config file and the environment applied, validated.
    func resolve(_ settings: Settings) throws -> AppStoreSettings {
        let resolved = AppStoreSettings(
            bundleID: try settings.required(bundleId, "bundle_id", flag: "--bundle-id"),
            productionURL: settings.string(productionUrl, "production_url") ?? VerifyReceiptConfiguration.appleProductionURL,
            sandboxURL: settings.string(sandboxUrl, "sandbox_url") ?? VerifyReceiptConfiguration.appleSandboxURL,
            sharedSecretFile: settings.string(sharedSecretFile, "shared_secret_file"),
            concurrency: try settings.int(concurrency, "concurrency", default: 8),
            maxAttempts: try settings.int(maxAttempts, "max_attempts", default: RetryPolicy().maxAttempts),
            requestTimeout: try settings.double(requestTimeout, "request_timeout", default: 10))
        try resolved.validate()
        return resolved
    }
}

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
        guard (1...512).contains(concurrency) else { throw usageError("--concurrency must be between 1 and 512, got \(concurrency).") }
        guard RetryPolicy.allowedAttempts.contains(maxAttempts) else { throw usageError("--max-attempts must be between 1 and 10, got \(maxAttempts).") }
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

    /// The settings recorded in the run history (never the secret).
    var recorded: [String: String] {
        ["bundle_id": bundleID, "production_url": productionURL, "sandbox_url": sandboxURL,
         "concurrency": String(concurrency), "max_attempts": String(maxAttempts), "request_timeout": String(requestTimeout)]
    }
}

/// What a run prints and writes besides the database.
struct OutputOptions: ParsableArguments {
    @Option(help: "Report format on stdout: text or json (default: text).")
    var report: ReportFormat?

    @Option(help: "Log level on stderr: trace, debug, info, notice, warning, error, critical (default: info).")
    var logLevel: Logger.Level?

    @Option(help: "Log format on stderr: text (for people) or json (one object per line) (default: text).")
    var logFormat: LogFormat?

    @Option(help: "Write Prometheus metrics (text format) to this file at the end of the run, for node_exporter's textfile collector.")
    var metricsFile: String?

    func resolve(_ settings: Settings) throws -> OutputSettings {
        func parsed<T: RawRepresentable>(_ option: T?, _ key: String, _ fallback: T) throws -> T where T.RawValue == String {
            if let option { return option }
            guard let text = settings.string(nil, key) else { return fallback }
            guard let value = T(rawValue: text) else { throw usageError("\(key) cannot be '\(text)'.") }
            return value
        }
        return OutputSettings(
            report: try parsed(report, "report", .text), logLevel: try parsed(logLevel, "log_level", .info),
            logFormat: try parsed(logFormat, "log_format", .text), metricsFile: settings.string(metricsFile, "metrics_file"))
    }
}

struct OutputSettings {
    var report: ReportFormat
    var logLevel: Logger.Level
    var logFormat: LogFormat
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
