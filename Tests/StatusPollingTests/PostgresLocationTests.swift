import Foundation
import Testing

@testable import PostgresStore

/// `--database postgres://…` read as libpq reads it: the parts of the URL, the password from the
/// URL, PGPASSWORD or a .pgpass-style file, and a name for messages that never carries it.
@Suite struct PostgresLocationTests {
    /// The PostgreSQL store's tests run only with a server; under CI its absence is a failure,
    /// not a silent skip.
    @Test func underCIThePostgreSQLServerIsThere() {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            #expect(PostgresTestServer.url != nil, "Scripts/test.sh starts a PostgreSQL server and sets STATUS_POLLER_TEST_POSTGRES_URL")
            #expect(StoreKind.available == [.sqlite, .postgres])
        }
    }

    @Test func theURLsPartsAndANameWithoutThePassword() throws {
        let location = try PostgresLocation("postgresql://poller:s3cr%40t@db.internal:6432/subs?sslmode=verify-full&sslrootcert=/etc/ca.pem", environment: [:])
        #expect(location.user == "poller")
        #expect(location.password == "s3cr@t")
        #expect(location.passwordSource == "the URL")
        #expect(location.host == "db.internal")
        #expect(location.port == 6432)
        #expect(location.database == "subs")
        #expect(location.sslMode == .verifyFull)
        #expect(location.sslRootCertificate == "/etc/ca.pem")
        #expect(location.name == "postgres://poller@db.internal:6432/subs?sslmode=verify-full")
        #expect(PostgresLocation.redacted("postgres://poller:s3cr%40t@db.internal/subs") == "postgres://poller:<redacted>@db.internal/subs")
        #expect(PostgresLocation.redacted("postgres://poller@db.internal/subs") == "postgres://poller@db.internal/subs")
    }

    @Test func defaultsAndTheEnvironmentFillWhatTheURLLeavesOut() throws {
        let location = try PostgresLocation("postgres://", environment: ["PGUSER": "u", "PGHOST": "h", "PGPORT": "5433", "PGDATABASE": "d", "PGPASSWORD": "pw", "PGSSLMODE": "require"])
        #expect(location.name == "postgres://u@h:5433/d?sslmode=require")
        #expect(location.password == "pw")
        #expect(location.passwordSource == "PGPASSWORD")
        let plain = try PostgresLocation("postgres://app@/subs?host=/run/postgresql", environment: [:])
        #expect(plain.socketDirectory == "/run/postgresql")
        #expect(plain.host == nil)
        #expect(plain.port == 5432)
        #expect(plain.sslMode == .prefer)
        #expect(plain.password == nil)
        #expect(try PostgresLocation("postgres://app@/subs", environment: ["PGHOST": "/var/run/postgresql"]).socketDirectory == "/var/run/postgresql")
    }

    @Test func badURLsSayWhatToWrite() throws {
        #expect(throws: PostgresLocation.Invalid.self) { try PostgresLocation("postgres://u@h:99999/d", environment: [:]) }
        #expect(throws: PostgresLocation.Invalid(description: "sslmode 'sometimes' is not one of disable, allow, prefer, require, verify-ca, verify-full.")) {
            try PostgresLocation("postgres://u@h/d?sslmode=sometimes", environment: [:])
        }
        do {
            _ = try PostgresLocation("postgres://u:hunter2@h/d?sslmod=require", environment: [:])
            Issue.record("an unknown parameter was accepted")
        } catch let invalid as PostgresLocation.Invalid {
            #expect(invalid.description.hasPrefix("unknown parameter 'sslmod' in the PostgreSQL URL postgres://u:<redacted>@h/d?sslmod=require"))
            #expect(!invalid.description.contains("hunter2"))
        }
        #expect(PostgresLocation.isPostgresURL("postgresql://x") && PostgresLocation.isPostgresURL("postgres://x"))
        #expect(!PostgresLocation.isPostgresURL("/var/lib/status-poller/db.sqlite"))
    }

    @Test func aPgpassFileGivesThePasswordOnlyWhenOthersCannotReadIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pgpass-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pgpass").path
        try """
            # host:port:database:user:password
            other:5432:*:poller:wrong
            db.internal:6432:subs:poller:pa\\:ss\\\\word
            *:*:*:*:fallback
            """.write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        let location = try PostgresLocation("postgres://poller@db.internal:6432/subs", environment: ["PGPASSFILE": file])
        #expect(location.password == "pa:ss\\word")
        #expect(location.passwordSource == file)
        #expect(try PostgresLocation("postgres://someone@elsewhere/x", environment: ["PGPASSFILE": file]).password == "fallback")
        // PGPASSWORD comes first, as in libpq.
        #expect(try PostgresLocation("postgres://poller@db.internal:6432/subs", environment: ["PGPASSFILE": file, "PGPASSWORD": "env"]).password == "env")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        #expect(throws: PostgresLocation.Invalid(description: "the password file \(file) can be read by others (mode 644); run `chmod 600 \(file)`.")) {
            try PostgresLocation("postgres://poller@db.internal:6432/subs", environment: ["PGPASSFILE": file])
        }
    }

    /// A malformed URL is said once, with what to write, by every command that opens a database.
    @Test func theCommandsSayABadURLOnceAndExit2() async throws {
        for command in ["runs", "migrate"] {
            let outcome = try await StatusPollerProcess.launch([command, "--database", "postgres://poller@127.0.0.1/x?sslmode=bogus"]).outcome()
            #expect(outcome.status == 2)
            #expect(outcome.stderr == "error: sslmode 'bogus' is not one of disable, allow, prefer, require, verify-ca, verify-full.\n")
        }
    }
}
