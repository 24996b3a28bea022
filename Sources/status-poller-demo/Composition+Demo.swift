import Foundation
import PollerCommandLine
import PollingDemo
import PostgresStore
import SQLiteStore

/// The demo's databases: the same stores as `status-poller`'s, with the demo's hooks.
extension Composition {
    /// The database with the demo's hooks (whether it may be replaced, a fresh copy).
    static func demoDatabase(_ location: String) throws -> DemoDatabase {
        guard isPostgres(location) else {
            let sqlite = SQLiteDatabase(path: location)
            return DemoDatabase(sqlite, isReplaceable: { await sqlite.isReplaceableByDemo() }, recreate: { try await sqlite.recreateForDemo() })
        }
        let postgres = try self.postgres(location, worker: .host)
        return DemoDatabase(postgres, isReplaceable: { await postgres.isReplaceableByDemo() }, recreate: { try await postgres.recreateForDemo() })
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
}
