/// The event feed's settlements, its pruning and its reads — when the next delivery is due, the
/// events as stored, the counts — on any ``SQLStore``. (The fan-out, take and replay are still
/// each store's: `docs/design/STORE-SEAM.md`, step 9.)
extension EventOutbox where Self: SQLStore {
    public func settle(_ outcomes: [DeliveryOutcome], endpoint: String, owner: String) async throws {
        let delivered = EventDeliverySQL.settleDelivered(outcomes, endpoint: endpoint)
        let failures = outcomes.filter { $0.result != .delivered }.map { EventDeliverySQL.settle($0, endpoint: endpoint, owner: owner) }
        guard !failures.isEmpty else {
            // The successes alone: one statement, its own transaction.
            if let delivered { try await execute(delivered) }
            return
        }
        try await transaction { session in
            if let delivered { try await session.execute(delivered) }
            for failure in failures { try await session.execute(failure) }
        }
    }

    public func pruneEvents(writtenBeforeMs: Int64) async throws -> Int {
        try await changes(EventDeliverySQL.prune(writtenBeforeMs: writtenBeforeMs))
    }

    public func nextDue(endpoint: String) async throws -> Int64? {
        try await firstRow(EventDeliverySQL.nextDue(endpoint)) { row -> Int64? in try row.column() } ?? nil
    }

    public func events(_ filter: EventFilter, limit: Int) async throws -> [StoredEvent] {
        try await rows(EventDeliverySQL.list(filter, limit: limit)) { try EventDeliverySQL.stored(&$0) }
    }

    public func deliveryCounts() async throws -> [String: Int] {
        var counts = Dictionary(uniqueKeysWithValues: ["pending", "delivered", "dead"].map { ($0, 0) })
        for (state, count) in try await rows(EventDeliverySQL.countsByState, { row -> (String, Int) in (try row.column(), try row.column()) }) {
            counts[state] = count
        }
        counts["events"] = try await firstRow(EventDeliverySQL.eventCount) { row -> Int in try row.column() } ?? 0
        return counts
    }
}
