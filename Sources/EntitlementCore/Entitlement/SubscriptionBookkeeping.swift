/// The poller's bookkeeping of one row: what happened at the last attempts. Never part of the
/// entitlement; for operators, `show`, and the demo's checks.
public struct SubscriptionBookkeeping: Sendable, Equatable {
    /// ms (run clock) of the last attempt, successful or not.
    public var lastAttemptAt: Int64?
    /// ms (run clock) of the last successful verification.
    public var lastVerifiedAt: Int64?
    /// Apple's status at the last attempt, when one was answered.
    public var lastAppleStatus: Int?
    /// The failure reason of the last attempt; nil after a success.
    public var lastErrorReason: String?
    /// Its human explanation.
    public var lastError: String?
    /// Failures since the last success.
    public var consecutiveFailures: Int

    public init(lastAttemptAt: Int64? = nil, lastVerifiedAt: Int64? = nil, lastAppleStatus: Int? = nil, lastErrorReason: String? = nil, lastError: String? = nil, consecutiveFailures: Int = 0) {
        self.lastAttemptAt = lastAttemptAt
        self.lastVerifiedAt = lastVerifiedAt
        self.lastAppleStatus = lastAppleStatus
        self.lastErrorReason = lastErrorReason
        self.lastError = lastError
        self.consecutiveFailures = consecutiveFailures
    }
}
