import Foundation
import Logging
import PostgresNIO
import StatusPolling

/// A PostgreSQL database as a ``PollingDatabase``: one population shared by any number of
/// workers. Runs with the same worker name exclude each other (``WorkerLock``); runs with
/// different names share the night's or the backfill's rows through leases.
public struct PostgreSQLDatabase: PollingDatabase {
    public let location: PostgresLocation
    /// This process's worker name (`--worker-name`, default the host name): its lock and its leases.
    public let worker: String
    /// How long a lease lasts (`--lease-seconds`).
    public let leaseDuration: Duration
    /// Whether the store's writers fill the outbox (``SQLStore/writesOutbox``).
    public let writesOutbox: Bool
    public let logger: Logger

    /// The lease length unless configured: long enough for a slow App Store and retries, short
    /// enough that a dead worker's rows are picked up within the night.
    public static let defaultLeaseDuration: Duration = .seconds(300)

    public var name: String { location.name }

    public init(
        location: PostgresLocation, worker: String, leaseDuration: Duration = Self.defaultLeaseDuration, writesOutbox: Bool = true,
        logger: Logger = Logger(label: "status-poller.postgres")
    ) {
        self.location = location
        self.worker = worker
        self.leaseDuration = leaseDuration
        self.writesOutbox = writesOutbox
        self.logger = logger
    }

    public func migrate() async throws -> [String] {
        let connector = try await PostgresConnector.connect(location, maximumConnections: 1, logger: logger)
        defer { connector.close() }
        return try await PostgresMigrator.migrate(connector)
    }

    public func open() async throws -> any PollingStore {
        try await openStore()
    }

    /// The store, typed: for tests and the demo.
    public func openStore() async throws -> PostgresSubscriptionStore {
        let connector = try await PostgresConnector.connect(location, logger: logger)
        do {
            try await PostgresMigrator.checkMigrated(connector)
        } catch {
            connector.close()
            throw error
        }
        return PostgresSubscriptionStore(connector: connector, worker: worker, leaseDuration: leaseDuration, writesOutbox: writesOutbox)
    }

    public func acquireRunLock(holder: RunLock.Holder) async throws -> any RunLease {
        try await WorkerLock.acquire(location, worker: worker, holder: holder, logger: logger)
    }

    /// Replaceable when it holds no table of ours and no other table, or only the demo's subscribers.
    public func isReplaceableByDemo() async -> Bool {
        guard let connector = try? await PostgresConnector.connect(location, maximumConnections: 1, logger: logger) else { return false }
        defer { connector.close() }
        return (try? await connector.withConnection { connection in
            let hasSubscriptions = try await connection.query("SELECT to_regclass('subscriptions') IS NOT NULL", logger: logger).decode(Bool.self).collect().first ?? false
            guard hasSubscriptions else {
                let tables = try await connection.query(
                    "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()", logger: logger).decode(Int64.self).collect().first ?? 1
                return tables == 0
            }
            let others = try await connection.query(
                "SELECT count(*) FROM subscriptions WHERE user_id NOT LIKE 'sim-user-%'", logger: logger).decode(Int64.self).collect().first ?? 1
            return others == 0
        }) ?? false
    }

    /// Drops status-poller's own objects (nothing else) and migrates afresh.
    public func recreateForDemo() async throws -> any PollingStore {
        let connector = try await PostgresConnector.connect(location, maximumConnections: 1, logger: logger)
        do {
            try await connector.transaction { connection in
                for statement in [
                    "DROP VIEW IF EXISTS entitlements",
                    // Every table a migration creates (PostgresSchema): a new one must be named here too.
                    """
                    DROP TABLE IF EXISTS event_deliveries, event_endpoints, outbound_events, subscription_events, work_targets, poll_runs, app_store_notifications, notification_history_checkpoints, renewal_extensions, consumption_requests, consumption_consents,
                        subscription_transactions, subscriptions, schema_migrations CASCADE
                    """,
                    "DROP FUNCTION IF EXISTS subscriptions_receipt_uploaded() CASCADE",
                ] {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            _ = try await PostgresMigrator.migrate(connector)
        } catch {
            connector.close()
            throw error
        }
        connector.close()
        return try await openStore()
    }
}
