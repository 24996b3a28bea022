import Logging
import PostgresNIO
import StatusPolling

/// The event feed's deliveries on PostgreSQL, shared by every deliverer on the database: the
/// fan-out locks its endpoint's row, and a delivery is leased (owner and expiry) by the one that
/// takes it, so each goes to one deliverer at a time and a dead deliverer's come back when the
/// lease ends. Only a user's oldest pending event is ever taken, so the order holds across them.
extension PostgresSubscriptionStore {
    public func fanOut(endpoint: String, nowMs: Int64) async throws -> Int {
        let added = try await addDeliveries(endpoint: endpoint, nowMs: nowMs)
        if deliveryStatistics.shouldAnalyze(afterAdding: added) {
            try await read { connection, logger in try await connection.execute("ANALYZE event_deliveries", logger: logger) }
        }
        return added
    }

    private func addDeliveries(endpoint: String, nowMs: Int64) async throws -> Int {
        try await read { connection, logger in
            try await connection.execute(EventDeliverySQL.ensureEndpoint(endpoint), logger: logger)
            return try await connection.rows(EventDeliverySQL.fanOutPostgres(endpoint, dueAtMs: nowMs), logger: logger) { row -> Int in try row.column() }.first ?? 0
        }
    }

    public func takeDeliveries(endpoint: String, owner: String, nowMs: Int64, leaseUntilMs: Int64, limit: Int) async throws -> [EventDelivery] {
        let from = pendingFloor.event(for: endpoint)
        let take = PreparedTake(endpoint: endpoint, owner: owner, nowMs: nowMs, untilMs: leaseUntilMs, limit: limit, from: from)
        let taken = try await read { connection, logger in try await connection.execute(take, logger: logger).collect() }
        if let lowest = taken.first?.lowestPending { pendingFloor.record(lowest, for: endpoint, walkedFrom: from) }
        return taken.map(\.delivery)
    }

    /// The library's replay, and the take's walks start from the beginning again: earlier
    /// deliveries are pending again.
    public func replay(_ selection: ReplaySelection, endpoint: String?, nowMs: Int64) async throws -> Int {
        defer { pendingFloor.forget() }
        return try await changes(EventDeliverySQL.replay(selection, endpoint: endpoint, nowMs: nowMs))
    }
}
