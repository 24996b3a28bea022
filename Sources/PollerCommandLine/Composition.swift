import Foundation
import Logging
import PostgresStore
import SQLiteStore
import StatusPolling

/// The one place that names the concrete stores. Everything else in the executables, and all of
/// the library, sees only `PollingDatabase`; `status-poller` adds the status source a run asks
/// (`Composition+StatusSource`), `status-poller-demo` the demo's database hooks.
package enum Composition {
    /// How this process takes part when workers share a PostgreSQL database.
    package struct Worker {
        package static let defaultLeaseSeconds = Int(PostgreSQLDatabase.defaultLeaseDuration.components.seconds)

        package var name: String
        package var leaseDuration: Duration
        /// The name was set (`--worker-name`, `worker_name`), not the host name by default: such a
        /// worker writes a metrics file of its own.
        package var isNamed = false

        package init(name: String, leaseDuration: Duration, isNamed: Bool = false) {
            self.name = name
            self.leaseDuration = leaseDuration
            self.isNamed = isNamed
        }

        /// This host's worker with the default lease: for commands that lease nothing.
        package static var host: Worker { Worker(name: ProcessInfo.processInfo.hostName, leaseDuration: PostgreSQLDatabase.defaultLeaseDuration) }
    }

    /// The database `--database` names: a `postgres://` or `postgresql://` URL, else a SQLite file
    /// path; its writers fill the outbox when `writesOutbox` (``SQLStore/writesOutbox``).
    package static func database(_ location: String, worker: Worker = .host, writesOutbox: Bool) throws -> any PollingDatabase {
        guard isPostgres(location) else { return SQLiteDatabase(path: location, writesOutbox: writesOutbox) }
        return try postgres(location, worker: worker, writesOutbox: writesOutbox)
    }

    package static func postgres(_ location: String, worker: Worker, writesOutbox: Bool = true) throws -> PostgreSQLDatabase {
        let parsed: PostgresLocation
        do {
            parsed = try PostgresLocation(location)
        } catch {
            throw usageError("\(error)")
        }
        // PostgresNIO logs queries with their values at debug level: receipts must not reach a log.
        var logger = Logger(label: "status-poller.postgres")
        logger.logLevel = .warning
        return PostgreSQLDatabase(location: parsed, worker: worker.name, leaseDuration: worker.leaseDuration, writesOutbox: writesOutbox, logger: logger)
    }

    /// Whether `location` names a PostgreSQL database (a `postgres://` or `postgresql://` URL).
    package static func isPostgres(_ location: String) -> Bool {
        PostgresLocation.isPostgresURL(location)
    }

    /// Whether `location` carries a password: then it should not come from the command line,
    /// where other users of the host see it (`ps`).
    package static func hasPassword(_ location: String) -> Bool {
        PostgresLocation.isPostgresURL(location) && PostgresLocation.redacted(location) != location
    }

    /// How messages name `location`: a URL without its password.
    package static func displayName(_ location: String) -> String {
        guard PostgresLocation.isPostgresURL(location) else { return location }
        return (try? PostgresLocation(location).name) ?? PostgresLocation.redacted(location)
    }
}
