import Logging
import PostgresNIO
import StatusPolling

/// Applies ``PostgresSchema``'s pending migrations in one transaction (PostgreSQL's DDL is
/// transactional, so a failed migration leaves nothing half-made), under an advisory lock so that
/// `migrate` run on several hosts at once applies each migration once.
enum PostgresMigrator {
    /// The advisory lock of `migrate`, apart from every worker's.
    static let lockKey: Int64 = 0x5354_4154_5553_0001

    /// The identifiers applied, oldest first; empty when the table of migrations does not exist.
    static func applied(_ connection: PostgresConnection, logger: Logger) async throws -> [String] {
        let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger).decode(Bool.self).collect().first ?? false
        guard exists else { return [] }
        return try await connection.query("SELECT identifier FROM schema_migrations ORDER BY applied_order", logger: logger).decode(String.self).collect()
    }

    /// Applies what is missing (up to and including `last`, for tests of an upgrade; nil: every
    /// migration); returns what it applied. Refuses a database migrated by a newer binary.
    static func migrate(_ connector: PostgresConnector, upTo last: String? = nil) async throws -> [String] {
        let logger = connector.logger
        return try await connector.transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    identifier TEXT PRIMARY KEY,
                    applied_order INTEGER NOT NULL,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """, logger: logger)
            let done = try await applied(connection, logger: logger)
            try refuseNewer(done, name: connector.location.name)
            var applied: [String] = []
            let through = last.flatMap { last in PostgresSchema.migrations.firstIndex { $0.identifier == last } } ?? PostgresSchema.migrations.count - 1
            for (order, migration) in PostgresSchema.migrations[...through].enumerated() where !done.contains(migration.identifier) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (identifier, applied_order) VALUES (\(migration.identifier), \(order + 1))", logger: logger)
                applied.append(migration.identifier)
            }
            return applied
        }
    }

    /// Throws unless every migration this binary knows is applied and none other is.
    static func checkMigrated(_ connector: PostgresConnector) async throws {
        let done = try await connector.withConnection { connection in try await applied(connection, logger: connector.logger) }
        try refuseNewer(done, name: connector.location.name)
        if done.count < PostgresSchema.identifiers.count {
            throw StoreError.notMigrated(path: connector.location.name, current: done.last, required: PostgresSchema.latest)
        }
    }

    private static func refuseNewer(_ done: [String], name: String) throws {
        let unknown = done.filter { !PostgresSchema.identifiers.contains($0) }
        if !unknown.isEmpty { throw StoreError.schemaTooNew(path: name, unknown: unknown.sorted(), known: PostgresSchema.latest) }
    }
}
