/// The refund requests and the web service's consents in `consumption_requests` and
/// `consumption_consents`, on any ``SQLStore``.
extension ConsumptionLedger where Self: SQLStore {
    public func dueConsumptionRequests(nowMs: Int64, limit: Int) async throws -> [ConsumptionRequestRecord] {
        try await rows(ConsumptionSQL.due(nowMs: nowMs, limit: limit)) { try ConsumptionSQL.read(&$0) }
    }

    public func claimConsumptionRequest(_ notificationID: String, nowMs: Int64, untilMs: Int64, body: String, preference: RefundPreference?) async throws -> String? {
        try await commit([ConsumptionSQL.claim(notificationID, nowMs: nowMs, untilMs: untilMs, body: body, preference: preference)]) { row -> String in
            try row.column()
        }.first
    }

    public func settleConsumptionRequest(_ settlement: ConsumptionSettlement) async throws {
        try await commit(ConsumptionSQL.settle(settlement))
    }

    public func consumptionRequests(_ query: ConsumptionQuery) async throws -> [ConsumptionRequestRecord] {
        try await rows(ConsumptionSQL.list(query)) { try ConsumptionSQL.read(&$0) }
    }

    public func recordConsumptionConsent(userID: String, consented: Bool, lastUsedAtMs: Int64?, nowMs: Int64) async throws {
        try await commit(ConsumptionSQL.consent(userID: userID, consented: consented, lastUsedAtMs: lastUsedAtMs, nowMs: nowMs))
    }
}
