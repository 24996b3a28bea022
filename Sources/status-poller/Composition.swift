import Foundation
import Logging
import PollingDemo
import PostgresStore
import SQLiteStore
import StatusPolling

/// The one place that names the concrete stores and chooses the status source a run asks.
/// Everything else in the executable, and all of the library, sees only `PollingDatabase` and
/// `SubscriptionStatusSource` — except the notification commands (the catch-up before a run,
/// `notifications catch-up`, `notifications test`), which make a `ServerAPIClient` of their own on
/// the same HTTP settings to read Apple's notification history, not a subscription's status.
enum Composition {
    /// How this process takes part when workers share a PostgreSQL database.
    struct Worker {
        static let defaultLeaseSeconds = Int(PostgreSQLDatabase.defaultLeaseDuration.components.seconds)

        var name: String
        var leaseDuration: Duration
        /// The name was set (`--worker-name`, `worker_name`), not the host name by default: such a
        /// worker writes a metrics file of its own.
        var isNamed = false

        /// This host's worker with the default lease: for commands that lease nothing.
        static var host: Worker { Worker(name: ProcessInfo.processInfo.hostName, leaseDuration: PostgreSQLDatabase.defaultLeaseDuration) }
    }

    /// The database `--database` names: a `postgres://` or `postgresql://` URL, else a SQLite file path.
    static func database(_ location: String, worker: Worker = .host) throws -> any PollingDatabase {
        guard isPostgres(location) else { return SQLiteDatabase(path: location) }
        return try postgres(location, worker: worker)
    }

    private static func postgres(_ location: String, worker: Worker) throws -> PostgreSQLDatabase {
        let parsed: PostgresLocation
        do {
            parsed = try PostgresLocation(location)
        } catch {
            throw usageError("\(error)")
        }
        // PostgresNIO logs queries with their values at debug level: receipts must not reach a log.
        var logger = Logger(label: "status-poller.postgres")
        logger.logLevel = .warning
        return PostgreSQLDatabase(location: parsed, worker: worker.name, leaseDuration: worker.leaseDuration, logger: logger)
    }

    /// The workers that share the Server API's rate: those of a PostgreSQL database (nil for
    /// SQLite, where one run at a time uses the whole rate).
    static func rateSharingWorkers(_ location: String, worker: Worker) throws -> (any RateSharingWorkers)? {
        guard isPostgres(location) else { return nil }
        return try postgres(location, worker: worker).rateSharingWorkers
    }

    /// The same database for the demo, with the demo's hooks (whether it may be replaced, a fresh copy).
    static func demoDatabase(_ location: String) throws -> DemoDatabase {
        guard isPostgres(location) else {
            let sqlite = SQLiteDatabase(path: location)
            return DemoDatabase(sqlite, isReplaceable: { await sqlite.isReplaceableByDemo() }, recreate: { try await sqlite.recreateForDemo() })
        }
        let postgres = try self.postgres(location, worker: .host)
        return DemoDatabase(postgres, isReplaceable: { await postgres.isReplaceableByDemo() }, recreate: { try await postgres.recreateForDemo() })
    }

    /// Whether `location` names a PostgreSQL database (a `postgres://` or `postgresql://` URL).
    static func isPostgres(_ location: String) -> Bool {
        PostgresLocation.isPostgresURL(location)
    }

    /// What the demo's worker processes get: the URL without its password (for their command
    /// line) and the password this process resolved from the URL, PGPASSWORD or ~/.pgpass (for
    /// their environment).
    static func workerDatabase(_ location: String) throws -> (url: String, password: String?) {
        let parsed: PostgresLocation
        do {
            parsed = try PostgresLocation(location)
        } catch {
            throw usageError("\(error)")
        }
        guard var components = URLComponents(string: location) else { return (parsed.name, parsed.password) }
        components.password = nil
        return (components.string ?? parsed.name, parsed.password)
    }

    /// Whether `location` carries a password: then it should not come from the command line,
    /// where other users of the host see it (`ps`).
    static func hasPassword(_ location: String) -> Bool {
        PostgresLocation.isPostgresURL(location) && PostgresLocation.redacted(location) != location
    }

    /// How messages name `location`: a URL without its password.
    static func displayName(_ location: String) -> String {
        guard PostgresLocation.isPostgresURL(location) else { return location }
        return (try? PostgresLocation(location).name) ?? PostgresLocation.redacted(location)
    }

    /// What a job's status source is built from: the shared secret and the Server API's
    /// configuration, each nil when that backend is not in use.
    struct Backends {
        var secret: SharedSecret?
        var serverAPI: ServerAPIConfiguration?
        var choice: BackendChoice
    }

    /// Runs `body` with the chosen source on one HTTP client shared for the whole job, whose
    /// connections are closed afterwards.
    static func withStatusSource<Result: Sendable>(
        _ appStore: AppStoreSettings, backends: Backends, _ body: (any SubscriptionStatusSource) async throws -> Result
    ) async throws -> Result {
        try await KeepAliveHTTPClient.withClient(appStore.httpConfiguration) { http in
            let verifyReceipt = backends.secret.map { VerifyReceiptClient(configuration: appStore.clientConfiguration(secret: $0), http: http) }
            let serverAPI = backends.serverAPI.map { ServerAPIClient(configuration: $0, http: http) }
            switch backends.choice {
            case .verifyReceipt: return try await body(verifyReceipt!)
            case .serverAPI: return try await body(serverAPI!)
            case .auto: return try await body(AutoStatusSource(serverAPI: serverAPI, verifyReceipt: verifyReceipt))
            }
        }
    }
}
