import GRDB
import StatusPolling

/// The event feed's deliveries on SQLite: each step one write transaction (SQLite has one writer
/// at a time, so a deliverer started by cron beside a long-running one still takes each delivery once).
extension SQLiteSubscriptionStore {
    public func fanOut(endpoint: String, nowMs: Int64) async throws -> Int {
        try await writing { db in
            try db.execute(shared: EventDeliverySQL.ensureEndpoint(endpoint))
            let after = try db.fetchOne(shared: EventDeliverySQL.fannedThrough(endpoint)) { row -> Int64 in try row.column() } ?? 0
            guard let through = try db.fetchOne(shared: EventDeliverySQL.latestEvent, { row -> Int64? in try row.column() }) ?? nil,
                through > after
            else { return 0 }
            try db.execute(shared: EventDeliverySQL.addDeliveries(endpoint, after: after, through: through, dueAtMs: nowMs))
            let added = db.changesCount
            try db.execute(shared: EventDeliverySQL.setFannedThrough(endpoint, through))
            return added
        }
    }

    public func takeDeliveries(endpoint: String, owner: String, nowMs: Int64, leaseUntilMs: Int64, limit: Int) async throws -> [EventDelivery] {
        try await writing { db in
            let heads = try db.fetchAll(shared: EventDeliverySQL.heads(endpoint, nowMs: nowMs, limit: limit)) { row -> Int64 in try row.column() }
            guard !heads.isEmpty else { return [] }
            let taken = try db.fetchAll(shared: EventDeliverySQL.lease(endpoint, events: heads, owner: owner, nowMs: nowMs, untilMs: leaseUntilMs)) {
                row -> Int64 in try row.column()
            }
            guard !taken.isEmpty else { return [] }
            return try db.fetchAll(shared: EventDeliverySQL.deliveries(endpoint, events: taken), EventDeliverySQL.delivery)
        }
    }

    public func replay(_ selection: ReplaySelection, endpoint: String?, nowMs: Int64) async throws -> Int {
        try await writing { db in
            try db.execute(shared: EventDeliverySQL.replay(selection, endpoint: endpoint, nowMs: nowMs))
            return db.changesCount
        }
    }
}
