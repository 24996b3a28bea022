import AppStoreBackends
import Foundation
import Logging
import PostgresNIO
import StatusPolling
import Synchronization

/// The workers of one PostgreSQL database that share the Server API's rate: each holds the same
/// *shared* advisory lock on a connection of its own while it runs, and the count of its holders
/// in `pg_locks` is the number of live workers. The server drops a worker's lock with its
/// connection, however the process ends (SIGKILL, a lost host), so a dead worker stops counting.
/// No table: `pg_locks` is readable by every role.
public final class PostgresRateSharing: RateSharingWorkers {
    /// The lock's two keys: `pg_advisory_lock_shared(int4, int4)` shows in `pg_locks` with
    /// `objsubid` 2, apart from the worker lock's and the night's single `bigint` keys.
    static let keys: (Int32, Int32) = (0x5350_5241, 1)

    private let location: PostgresLocation
    private let logger: Logger
    private let connection = Mutex<PostgresConnection?>(nil)

    public init(location: PostgresLocation, logger: Logger) {
        self.location = location
        self.logger = logger
    }

    public func join() async throws {
        let opened = try await PostgresConnection.connect(
            configuration: try location.connectionConfiguration(applicationName: "status-poller rate share pid \(ProcessInfo.processInfo.processIdentifier)"),
            id: 2, logger: logger)
        do {
            try await opened.query("SELECT pg_advisory_lock_shared(\(Self.keys.0), \(Self.keys.1))", logger: logger)
        } catch {
            try? await opened.close()
            throw error
        }
        let previous = connection.withLock { held in
            defer { held = opened }
            return held
        }
        try? await previous?.close()
    }

    public func count() async throws -> Int {
        guard let connection = connection.withLock({ $0 }) else { throw PostgresRateSharing.NotJoined() }
        let count = try await connection.query("""
            SELECT count(*) FROM pg_locks
            WHERE locktype = 'advisory' AND granted AND objsubid = 2
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND classid::bigint = \(Int64(Self.keys.0)) AND objid::bigint = \(Int64(Self.keys.1))
            """, logger: logger).decode(Int64.self).collect().first ?? 0
        // Our own lock is among them, or this connection lost it: then count is not to be trusted.
        guard count >= 1 else { throw PostgresRateSharing.NotJoined() }
        return Int(count)
    }

    public func leave() async {
        let held = connection.withLock { held in
            defer { held = nil }
            return held
        }
        try? await held?.close()
    }

    /// The worker holds no lock (it never joined, or its connection was replaced).
    struct NotJoined: Error, CustomStringConvertible {
        var description: String { "this worker is not counted among those sharing the rate" }
    }
}

extension PostgreSQLDatabase {
    /// The workers of this database that share the Server API's rate.
    public var rateSharingWorkers: any RateSharingWorkers { PostgresRateSharing(location: location, logger: logger) }
}
