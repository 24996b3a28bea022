import Foundation
import Logging
import PostgresNIO
import StatusPolling

/// The PostgreSQL store: a pool of PostgresNIO connections. The web service keeps reading
/// `entitlements` while runs write (MVCC); several workers share the work through leases.
public final class PostgresSubscriptionStore: PollingStore, LeasingStore {
    let connector: PostgresConnector
    /// This process's worker name (the owner written on the rows it leases) and its leases' length.
    let share: WorkShare
    /// See ``SQLStore/writesOutbox``.
    public let writesOutbox: Bool
    /// When the event deliverer refreshes the deliveries' statistics.
    let deliveryStatistics = DeliveryStatistics()
    /// Where the event deliverer's takes start their walk.
    let pendingFloor = PendingFloor()
    var logger: Logger { connector.logger }
    public var name: String { connector.location.name }

    init(connector: PostgresConnector, worker: String, leaseDuration: Duration, writesOutbox: Bool) {
        self.connector = connector
        share = WorkShare(worker: worker, leaseDuration: leaseDuration)
        self.writesOutbox = writesOutbox
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
