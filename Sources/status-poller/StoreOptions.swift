import ArgumentParser
import Configuration
import Foundation
import PollerCommandLine
import StatusPolling
import SystemPackage

/// The database and the config file: every command takes both.
///
/// Where settings come from, highest first: an option on the command line, an environment variable
/// (`STATUS_POLLER_` + the key in upper case), the JSON config file (`--config` or
/// `STATUS_POLLER_CONFIG`), then the built-in default.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Path of the SQLite database, or a PostgreSQL URL postgres://USER@HOST:PORT/DATABASE[?sslmode=require|verify-full&sslrootcert=FILE] "
            + "(else `database` in the config file, or STATUS_POLLER_DATABASE). The PostgreSQL password comes from PGPASSWORD or ~/.pgpass, "
            + "never from the command line."))
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

    /// The database path or URL, from the option, the environment or the config file. A password
    /// in a URL on the command line is refused: `ps` shows it to every user of the host.
    func databasePath(_ settings: Settings) throws -> String {
        if let database, Composition.hasPassword(database) {
            throw usageError("--database carries a password, which other users of this host can read (ps). "
                + "Give it in PGPASSWORD, in ~/.pgpass (mode 600), or in the URL in STATUS_POLLER_DATABASE or the config file.")
        }
        return try settings.required(database, "database", flag: "--database")
    }

    /// Whether this command's writers fill the outbox: only when something reads it — an endpoint
    /// in the config file (`event_endpoints`), or `event_outbox` for a web service that reads
    /// `outbound_events` or listens for its NOTIFY itself (docs/EVENTS.md).
    func writesOutbox(_ settings: Settings, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        settings.flag(false, "event_outbox") || EventSettings.hasEndpoints(configPath: config ?? environment["STATUS_POLLER_CONFIG"])
    }

    /// Opens the migrated database, runs `body`, closes it. A database that cannot be opened ends
    /// the command with the store's exit code (2 for a configuration error, 3 when locked) and
    /// its message, which says what to do.
    func withStore<T>(_ settings: Settings, _ body: (any PollingStore, String) async throws -> T) async throws -> T {
        let path = try databasePath(settings)
        let store: any PollingStore
        do {
            store = try await Composition.database(path, writesOutbox: writesOutbox(settings)).open()
        } catch let error as StoreError {
            throw exitError(error.exitCode, "\(error)")
        } catch let failure as CommandFailure {
            throw failure  // a malformed URL
        } catch {
            throw usageError("\(error)")
        }
        do {
            let result = try await body(store, Composition.displayName(path))
            try? await store.close()
            return result
        } catch {
            try? await store.close()
            throw error
        }
    }
}
