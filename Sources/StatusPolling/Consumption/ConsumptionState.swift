/// Where the answer to one `CONSUMPTION_REQUEST` stands (`consumption_requests.state`).
public enum ConsumptionState: String, Sendable, CaseIterable, Codable {
    /// Queued or being retried: the sender will answer it before its deadline.
    case pending
    /// Apple took the answer (HTTP 202). Never sent again.
    case sent
    /// Apple refused the answer (a 4xx with its `errorCode`, or 404 for a transaction it does not
    /// know). Not sent again: the same body would be refused the same way.
    case refused
    /// The customer gave no consent to share consumption data (Apple refuses any answer without
    /// `customerConsented: true`): nothing sent.
    case noConsent = "no_consent"
    /// The deadline (the request's signedDate + 12 h) passed before Apple took an answer: nothing
    /// more is sent.
    case expired
}
