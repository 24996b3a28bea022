/// One subscriber as the run reads it from the store: identity, the receipt to replay, and the
/// contract columns as they stand.
public struct SubscriptionRow: Sendable, Equatable {
    /// `id`: the store's primary key.
    public var id: Int64
    /// `user_id`: the web service's user.
    public var userID: String
    /// `latest_receipt`: the base64 receipt to replay. Personal data: never logged.
    public var latestReceipt: String
    /// The contract columns before this run.
    public var state: SubscriptionState
    /// The web service stored a new receipt since the last verification.
    public var receiptUploaded: Bool

    public init(id: Int64, userID: String, latestReceipt: String, state: SubscriptionState, receiptUploaded: Bool = false) {
        self.id = id
        self.userID = userID
        self.latestReceipt = latestReceipt
        self.state = state
        self.receiptUploaded = receiptUploaded
    }
}

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
