import PostgresNIO
import StatusPolling

/// The consumption requests and consents (``ConsumptionLedger``) in `consumption_requests` and `consumption_consents`.
extension PostgresSubscriptionStore {
    public func dueConsumptionRequests(nowMs: Int64, limit: Int) async throws -> [ConsumptionRequestRecord] {
        try await read { connection, logger in
            try await connection.rows(ConsumptionSQL.due(nowMs: nowMs, limit: limit), logger: logger) { try ConsumptionSQL.read(&$0) }
        }
    }

    public func claimConsumptionRequest(_ notificationID: String, nowMs: Int64, untilMs: Int64, body: String, preference: RefundPreference?) async throws -> String? {
        try await transaction { connection, logger in
            try await connection.rows(ConsumptionSQL.claim(notificationID, nowMs: nowMs, untilMs: untilMs, body: body, preference: preference), logger: logger) {
                reader -> String in try reader.column()
            }.first
        }
    }

    public func settleConsumptionRequest(_ settlement: ConsumptionSettlement) async throws {
        try await transaction { connection, logger in try await connection.execute(ConsumptionSQL.settle(settlement), logger: logger) }
    }

    public func consumptionRequests(_ query: ConsumptionQuery) async throws -> [ConsumptionRequestRecord] {
        try await read { connection, logger in try await connection.rows(ConsumptionSQL.list(query), logger: logger) { try ConsumptionSQL.read(&$0) } }
    }

    public func recordConsumptionConsent(userID: String, consented: Bool, lastUsedAtMs: Int64?, nowMs: Int64) async throws {
        try await transaction { connection, logger in
            try await connection.execute(ConsumptionSQL.consent(userID: userID, consented: consented, lastUsedAtMs: lastUsedAtMs, nowMs: nowMs), logger: logger)
        }
    }
}
