import Foundation
import Logging
import PostgresNIO
import StatusPolling

/// The PostgreSQL store: a pool of PostgresNIO connections. The web service keeps reading
/// `entitlements` while runs write (MVCC); several workers share the work through leases.
public final class PostgresSubscriptionStore: PollingStore, LeasingStore {
    let connector: PostgresConnector
    /// This process's worker name: the owner written on the rows it leases.
    public let worker: String
    public let leaseDuration: Duration
    /// When the event deliverer refreshes the deliveries' statistics.
    let deliveryStatistics = DeliveryStatistics()
    /// Where the event deliverer's takes start their walk.
    let pendingFloor = PendingFloor()
    var logger: Logger { connector.logger }
    public var name: String { connector.location.name }

    init(connector: PostgresConnector, worker: String, leaseDuration: Duration) {
        self.connector = connector
        self.worker = worker
        self.leaseDuration = leaseDuration
    }

    /// Runs statements outside a transaction: reads, and writes of one statement (its own transaction).
    func read<T: Sendable>(_ body: (PostgresConnection, Logger) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await connector.withConnection { connection in try await body(connection, logger) }
    }

    /// Runs `body` in a transaction.
    func transaction<T: Sendable>(_ body: (PostgresConnection, Logger) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await connector.transaction { connection in try await body(connection, logger) }
    }

    @discardableResult
    public func enroll(userID: String, receipt: String) async throws -> Int64 {
        try await enroll([(userID, receipt)])[0]
    }

    /// Inserts many subscribers in one transaction, one statement per thousand.
    public func enroll(_ subscribers: [(userID: String, receipt: String)]) async throws -> [Int64] {
        try await transaction { connection, logger in
            var ids: [Int64] = []
            for start in stride(from: 0, to: subscribers.count, by: 1000) {
                let chunk = subscribers[start..<min(start + 1000, subscribers.count)]
                let users = chunk.map(\.userID)
                let receipts = chunk.map(\.receipt)
                // Ids come from a sequence in the order the rows are inserted, so sorted they are
                // the subscribers' ids in input order.
                let rows = try await connection.query("""
                    INSERT INTO subscriptions (user_id, latest_receipt)
                    SELECT user_id, latest_receipt
                    FROM unnest(\(users)::text[], \(receipts)::text[]) WITH ORDINALITY AS input(user_id, latest_receipt, n)
                    ORDER BY n
                    RETURNING id
                    """, logger: logger).decode(Int64.self).collect()
                ids += rows.sorted()
            }
            return ids
        }
    }

    public func uploadReceipt(subscriptionID: Int64, receipt: String) async throws {
        try await read { connection, logger in
            try await connection.query("UPDATE subscriptions SET latest_receipt = \(receipt) WHERE id = \(subscriptionID)", logger: logger)
        }
    }

    /// The row with `id`, as the run would read it.
    public func subscription(id: Int64) async throws -> SubscriptionRow? {
        try await subscriptions(ids: [id]).first
    }

    public func subscriptions(userID: String) async throws -> [SubscriptionRow] {
        try await read { connection, logger in
            try await Self.rows(connection.query(
                "SELECT \(unescaped: RowReader.subscriptionColumns) FROM subscriptions WHERE user_id = \(userID) ORDER BY id", logger: logger)
            ) { reader in try reader.subscription() }
        }
    }

    public func subscriptionsWithBookkeeping(userID: String) async throws -> [(SubscriptionRow, SubscriptionBookkeeping)] {
        try await read { connection, logger in
            try await Self.rows(connection.query("""
                SELECT \(unescaped: RowReader.subscriptionColumns), \(unescaped: RowReader.bookkeepingColumns)
                FROM subscriptions WHERE user_id = \(userID) ORDER BY id
                """, logger: logger)
            ) { reader in (try reader.subscription(), try reader.bookkeeping()) }
        }
    }

    public func subscriptionsWithBookkeeping(after cursor: Int64, limit: Int) async throws -> [(SubscriptionRow, SubscriptionBookkeeping)] {
        try await read { connection, logger in
            try await Self.rows(connection.query("""
                SELECT \(unescaped: RowReader.subscriptionColumns), \(unescaped: RowReader.bookkeepingColumns)
                FROM subscriptions WHERE id > \(cursor) ORDER BY id LIMIT \(limit)
                """, logger: logger)
            ) { reader in (try reader.subscription(), try reader.bookkeeping()) }
        }
    }

    /// Every row of `sequence`, read by `body` with a ``RowReader``.
    static func rows<T>(_ sequence: PostgresRowSequence, _ body: (inout RowReader) throws -> T) async throws -> [T] {
        var result: [T] = []
        for try await row in sequence {
            var reader = RowReader(row)
            result.append(try body(&reader))
        }
        return result
    }

    public func close() async throws { connector.close() }
}
