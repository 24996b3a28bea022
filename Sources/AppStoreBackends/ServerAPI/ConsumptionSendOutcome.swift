/// What Apple said to one Send Consumption Information request.
public enum ConsumptionSendOutcome: Sendable, Equatable {
    /// 202: Apple took the answer; it is never sent again.
    case accepted(httpStatus: Int)
    /// A 4xx (Apple's `errorCode` when it gave one; 404 4040010 for a transaction it does not know):
    /// the same body would be refused again.
    case refused(httpStatus: Int?, appleError: Int?)
    /// A 5xx, a 429, Apple's retryable codes or a failed connection: try again (after `retryAfter`
    /// when Apple gave it) while the deadline allows.
    case retry(httpStatus: Int?, appleError: Int?, retryAfter: Duration?)
}
