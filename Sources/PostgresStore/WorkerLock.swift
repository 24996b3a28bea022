import Foundation
import Logging
import NIOCore
import PostgresNIO
import StatusPolling

/// "One run per worker name": a PostgreSQL session advisory lock keyed by `--worker-name`, held on
/// a connection of its own for the whole run. The server releases it when that connection ends,
/// however the process ends (SIGKILL, a lost host), so a dead worker never blocks its successor;
/// and because only a live worker holds it, that successor may take back the dead one's leases at once.
final class WorkerLock: RunLease {
    private let connection: PostgresConnection

    private init(connection: PostgresConnection) { self.connection = connection }

    /// Takes the lock of `worker` without waiting, or throws `RunLock.Failure.held` naming the session
    /// that holds it (its host, pid and start, from its `application_name`).
    static func acquire(_ location: PostgresLocation, worker: String, holder: RunLock.Holder, logger: Logger) async throws -> WorkerLock {
        let application = "status-poller pid \(holder.pid) on \(holder.host)"
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(applicationName: application), id: 1, logger: logger)
        } catch let invalid as PostgresLocation.Invalid {
            throw RunLock.Failure.cannotOpen(path: location.name, reason: invalid.description)
        } catch {
            throw RunLock.Failure.cannotOpen(path: location.name, reason: "cannot connect: \(String(reflecting: error).prefix(300))")
        }
        let resource = "worker '\(worker)' on \(location.name)"
        do {
            let taken = try await connection.query(
                "SELECT pg_try_advisory_lock(hashtextextended(\("status-poller worker " + worker), 0))", logger: logger
            ).decode(Bool.self).collect().first ?? false
            if taken { return WorkerLock(connection: connection) }
            let holderRow = try await connection.query("""
                SELECT a.application_name, to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'advisory' AND l.granted
                    AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(\("status-poller worker " + worker), 0)
                """, logger: logger).decode((String?, String?).self).collect().first
            try? await connection.close()
            throw RunLock.Failure.held(path: resource, by: holderRow.flatMap { Self.holder(application: $0.0, startedAt: $0.1, worker: worker) })
        } catch let failure as RunLock.Failure {
            throw failure
        } catch {
            try? await connection.close()
            throw RunLock.Failure.cannotOpen(path: resource, reason: "\(String(reflecting: error).prefix(300))")
        }
    }

    /// The holder named by `application` ("status-poller pid 123 on host").
    static func holder(application: String?, startedAt: String?, worker: String) -> RunLock.Holder? {
        guard let application, application.hasPrefix("status-poller pid ") else { return nil }
        let words = application.split(separator: " ", maxSplits: 4)
        guard words.count == 5, let pid = Int32(words[2]) else { return nil }
        return RunLock.Holder(pid: pid, host: String(words[4]), startedAt: startedAt ?? "unknown", command: "status-poller worker '\(worker)'")
    }

    /// Closes the lock's connection, which releases the lock; the connection lives until it is closed.
    func release() {
        let connection = self.connection
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }
}
