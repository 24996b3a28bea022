import Foundation
import Logging
import PostgresNIO

@testable import PostgresStore

/// The PostgreSQL server of the tests: each test gets a database of its own, created by the
/// administrator role and dropped afterwards, so tests run in parallel without seeing each other.
enum PostgresTestServer {
    /// The poller's URL (with its password: tests may, the command line may not).
    static var url: String? { ProcessInfo.processInfo.environment["STATUS_POLLER_TEST_POSTGRES_URL"] }
    /// The poller's password, for checks that it never shows.
    static var password: String { (try? PostgresLocation(url ?? "", environment: [:]))?.password ?? "no-password" }
    static var adminURL: String? { ProcessInfo.processInfo.environment["STATUS_POLLER_TEST_POSTGRES_ADMIN_URL"] }
    /// The CA of the throwaway cluster's certificate, for `sslmode=verify-full`.
    static var certificateAuthority: String? { ProcessInfo.processInfo.environment["STATUS_POLLER_TEST_POSTGRES_CA"] }

    static var logger: Logger {
        var logger = Logger(label: "tests.postgres")
        logger.logLevel = .error
        return logger
    }

    /// A new, empty database owned by the poller's role; returns the poller's location for it.
    static func createDatabase() async throws -> PostgresLocation {
        let (admin, poller) = try locations()
        let name = "sp_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await execute(admin, "CREATE DATABASE \(name) OWNER \(poller.user)")
        var location = poller
        location.database = name
        return location
    }

    static func dropDatabase(_ location: PostgresLocation) async {
        guard let (admin, _) = try? locations() else { return }
        try? await execute(admin, "DROP DATABASE IF EXISTS \(location.database) WITH (FORCE)")
    }

    /// Runs one statement on `location` over a connection of its own.
    static func execute(_ location: PostgresLocation, _ sql: String) async throws {
        let connector = try await PostgresConnector.connect(location, maximumConnections: 1, logger: logger)
        defer { connector.close() }
        _ = try await connector.withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        }
    }

    /// The connect timeout of the tests' connections (`Patience`): opening one (TCP, TLS, SCRAM)
    /// took over the default 10 s beside the suite and other builds; a refused connection still
    /// fails at once.
    static let connectTimeoutSeconds = Patience.boundSeconds

    private static func locations() throws -> (admin: PostgresLocation, poller: PostgresLocation) {
        guard let url, let adminURL else { throw PostgresUnavailable() }
        var (admin, poller) = (try PostgresLocation(adminURL, environment: [:]), try PostgresLocation(url, environment: [:]))
        admin.connectTimeout = connectTimeoutSeconds
        poller.connectTimeout = connectTimeoutSeconds
        return (admin, poller)
    }

    struct PostgresUnavailable: Error, CustomStringConvertible {
        var description: String { "no PostgreSQL for the tests: run them with Scripts/test.sh, which starts one" }
    }
}
