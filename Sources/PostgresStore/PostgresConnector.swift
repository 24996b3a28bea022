import Logging
import PostgresNIO
import StatusPolling

/// A running PostgresNIO client for one location: the pool's `run()` in a task of its own,
/// cancelled by ``close()``. PostgreSQL's errors come out as ``StoreError``s through ``storeError(_:writing:)``.
final class PostgresConnector: Sendable {
    let client: PostgresClient
    let location: PostgresLocation
    let logger: Logger
    private let running: Task<Void, Never>

    /// Checks with one connection of its own that the server can be reached and accepts the login
    /// (the pool would keep retrying a refused login), then starts a pool of at most `maximumConnections`.
    static func connect(_ location: PostgresLocation, maximumConnections: Int = 8, logger: Logger) async throws -> PostgresConnector {
        var configuration: PostgresClient.Configuration
        let probe: PostgresConnection.Configuration
        do {
            configuration = try location.clientConfiguration()
            probe = try location.connectionConfiguration(applicationName: location.applicationName)
        } catch let invalid as PostgresLocation.Invalid {
            throw StoreError.rejected(path: location.name, reason: invalid.description)
        }
        do {
            let connection = try await PostgresConnection.connect(configuration: probe, id: 0, logger: logger)
            try? await connection.close()
        } catch {
            throw PostgresConnector.storeError(error, location: location)
        }
        configuration.options.maximumConnections = maximumConnections
        // The pool's own log: errors only (it warns when a query races the start of `run()`, which
        // the task below makes harmless).
        var background = logger
        background.logLevel = .error
        let connector = PostgresConnector(client: PostgresClient(configuration: configuration, backgroundLogger: background), location: location, logger: logger)
        return connector
    }

    private init(client: PostgresClient, location: PostgresLocation, logger: Logger) {
        self.client = client
        self.location = location
        self.logger = logger
        running = Task { await client.run() }
    }

    func close() { running.cancel() }

    /// Runs `body` in a transaction, turning PostgreSQL's errors of the database as a whole into
    /// ``StoreError``s (a row's own error, a constraint, comes out as it is); any other failure
    /// counts as a failed write.
    func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch {
            throw mapped(error, writing: true)
        }
    }

    /// Runs `body` on a connection of the pool, mapping errors as ``transaction(_:)`` does; any
    /// other failure counts as a failed read.
    func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await client.withConnection { connection in try await body(connection) }
        } catch {
            throw mapped(error, writing: false)
        }
    }

    /// The error as the store reports it: a ``StoreError`` when it is the database's, else itself.
    func mapped(_ error: any Error, writing: Bool) -> any Error {
        if error is StoreError { return error }
        if let workflow = error as? WorkflowFailure { return workflow.error }
        if let transaction = error as? PostgresTransactionError {
            return mapped(transaction.closureError ?? transaction.beginError ?? transaction.commitError ?? error, writing: writing)
        }
        // A row's own trouble: a constraint (two workers adopting one chain at once), a value
        // the column cannot hold (class 22: an Apple value out of range, a NUL in a text), a
        // deadlock or a serialization failure. The run retries such a batch row by row, so one
        // odd answer costs its row, not the night (SQLite's rule, `endsTheRun`).
        if let psql = error as? PSQLError, psql.code == .server, let state = psql.serverInfo?[.sqlState],
            state.hasPrefix("23") || state.hasPrefix("22") || state == "40001" || state == "40P01"
        {
            return error
        }
        return storeError(error, writing: writing)
    }

    /// What went wrong, named without the password, with what to do.
    func storeError(_ error: any Error, writing: Bool = false) -> StoreError {
        Self.storeError(error, location: location, writing: writing)
    }

    static func storeError(_ error: any Error, location: PostgresLocation, writing: Bool = false) -> StoreError {
        let name = location.name
        guard let psql = error as? PSQLError else {
            return writing ? .unwritable(path: name, reason: "\(error)") : .unreadable(path: name, reason: "\(error)")
        }
        switch psql.code {
        case .server:
            let state = psql.serverInfo?[.sqlState] ?? ""
            let message = psql.serverInfo?[.message] ?? "error \(state)"
            switch state {
            case "28P01", "28000":
                let source = location.passwordSource.map { "the password from \($0)" } ?? "no password (set PGPASSWORD or ~/.pgpass)"
                return .rejected(path: name, reason: "\(message) (user \(location.user), \(source))")
            case "3D000":
                return .rejected(path: name, reason: "\(message); create it (`createdb \(location.database)`) and run `status-poller migrate --database \(name)`")
            case "42501":
                return .rejected(path: name, reason: "\(message); grant the poller's role what docs/POSTGRESQL.md lists")
            case "55P03", "40001", "40P01":
                return .busy(path: name, seconds: 0)
            case _ where state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300":
                return .unreachable(path: name, reason: message)
            case _ where state.hasPrefix("53") || state.hasPrefix("58") || state.hasPrefix("XX"):
                return .unwritable(path: name, reason: message)
            default:
                return writing ? .unwritable(path: name, reason: message) : .unreadable(path: name, reason: message)
            }
        case .authMechanismRequiresPassword:
            return .rejected(path: name, reason: "the server asks user \(location.user) for a password and none was given (the URL, PGPASSWORD or ~/.pgpass)")
        case .sslUnsupported:
            return .unreachable(path: name, reason: "the server does not offer TLS, which sslmode=\(location.sslMode.rawValue) requires")
        case .failedToAddSSLHandler:
            return .unreachable(path: name, reason: "TLS could not be set up: \(psql.underlying.map { "\($0)" } ?? "unknown reason")")
        default:
            let reason = psql.underlying.map { "\($0)" } ?? "\(psql.code)"
            return .unreachable(path: name, reason: reason)
        }
    }
}
