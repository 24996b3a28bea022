import GRDB
import StatusPolling

/// The consumption requests and consents (``ConsumptionLedger``) in `consumption_requests` and `consumption_consents`.
extension SQLiteSubscriptionStore {
    public func dueConsumptionRequests(nowMs: Int64, limit: Int) async throws -> [ConsumptionRequestRecord] {
        try await reading { db in try db.fetchAll(shared: ConsumptionSQL.due(nowMs: nowMs, limit: limit)) { try ConsumptionSQL.read(&$0) } }
    }

    public func claimConsumptionRequest(_ notificationID: String, nowMs: Int64, untilMs: Int64, body: String, preference: RefundPreference?) async throws -> String? {
        try await writing { db in
            try db.fetchOne(shared: ConsumptionSQL.claim(notificationID, nowMs: nowMs, untilMs: untilMs, body: body, preference: preference)) { row -> String in
                try row.column()
            }
        }
    }

    public func settleConsumptionRequest(_ settlement: ConsumptionSettlement) async throws {
        try await writing { db in try db.execute(shared: ConsumptionSQL.settle(settlement)) }
    }

    public func consumptionRequests(_ query: ConsumptionQuery) async throws -> [ConsumptionRequestRecord] {
        try await reading { db in try db.fetchAll(shared: ConsumptionSQL.list(query)) { try ConsumptionSQL.read(&$0) } }
    }

    public func recordConsumptionConsent(userID: String, consented: Bool, lastUsedAtMs: Int64?, nowMs: Int64) async throws {
        try await writing { db in try db.execute(shared: ConsumptionSQL.consent(userID: userID, consented: consented, lastUsedAtMs: lastUsedAtMs, nowMs: nowMs)) }
    }
}
