/// The event feed on any ``SQLStore``: each step one transaction of the shared statements
/// (``EventDeliverySQL``) — on SQLite, with its one writer, a deliverer started by cron beside a
/// long-running one still takes each delivery once. PostgreSQL, shared by many deliverers at once,
/// fans out and takes in one statement each instead, and tells of new events (`LISTEN`).
extension EventOutbox where Self: SQLStore {
    public func fanOut(endpoint: String, nowMs: Int64) async throws -> Int {
        try await transaction { session in
            try await session.execute(EventDeliverySQL.ensureEndpoint(endpoint))
            let after = try await session.firstRow(EventDeliverySQL.fannedThrough(endpoint)) { row -> Int64 in try row.column() } ?? 0
            guard let through = try await session.firstRow(EventDeliverySQL.latestEvent, { row -> Int64? in try row.column() }) ?? nil,
                through > after
            else { return 0 }
            let added = try await session.rows(EventDeliverySQL.addDeliveries(endpoint, after: after, through: through, dueAtMs: nowMs)) { _ in () }
            try await session.execute(EventDeliverySQL.setFannedThrough(endpoint, through))
            return added.count
        }
    }

    public func takeDeliveries(endpoint: String, owner: String, nowMs: Int64, leaseUntilMs: Int64, limit: Int) async throws -> [EventDelivery] {
        try await transaction { session in
            let heads = try await session.rows(EventDeliverySQL.heads(endpoint, nowMs: nowMs, limit: limit)) { row -> Int64 in try row.column() }
            guard !heads.isEmpty else { return [] }
            let lease = EventDeliverySQL.lease(endpoint, events: heads, owner: owner, nowMs: nowMs, untilMs: leaseUntilMs)
            let taken = try await session.rows(lease) { row -> Int64 in try row.column() }
            guard !taken.isEmpty else { return [] }
            return try await session.rows(EventDeliverySQL.deliveries(endpoint, events: taken)) { try EventDeliverySQL.delivery(&$0) }
        }
    }

    public func replay(_ selection: ReplaySelection, endpoint: String?, nowMs: Int64) async throws -> Int {
        try await changes(EventDeliverySQL.replay(selection, endpoint: endpoint, nowMs: nowMs))
    }

    /// PostgreSQL's outbox writes notify its channel (``OutboxSQL/notify(_:)``), which its store
    /// listens on (``ringOnNewEvents(_:)``); SQLite's deliverer looks at the clock.
    public var ringsOnNewEvents: Bool { dialect == .postgres }

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
