/// The database's record of Apple's consumption requests and their answers (`consumption_requests`),
/// and the web service's record of each customer's consent (`consumption_consents`). Requests are
/// queued by ``NotificationInbox/receive(_:ingest:nowMs:)`` in the notification's own transaction.
public protocol ConsumptionLedger: Sendable {
    /// Pending requests due at `nowMs`, oldest first, with the customer's consent and last use.
    func dueConsumptionRequests(nowMs: Int64, limit: Int) async throws -> [ConsumptionRequestRecord]
    /// Claims a due request for one send until `untilMs` (``ConsumptionSQL/claim(_:nowMs:untilMs:body:preference:)``):
    /// the body to send (the first claim's), or nil when another sender holds it or it is settled.
    func claimConsumptionRequest(_ notificationID: String, nowMs: Int64, untilMs: Int64, body: String, preference: RefundPreference?) async throws -> String?
    /// Records what came of a pending request; a settled one stays as it is.
    func settleConsumptionRequest(_ settlement: ConsumptionSettlement) async throws
    /// Recorded requests, newest first.
    func consumptionRequests(_ query: ConsumptionQuery) async throws -> [ConsumptionRequestRecord]
    /// Writes a customer's consent and last use as the web service would (tests, the demo).
    func recordConsumptionConsent(userID: String, consented: Bool, lastUsedAtMs: Int64?, nowMs: Int64) async throws
}
