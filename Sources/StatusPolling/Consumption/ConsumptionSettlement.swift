/// What came of one pending consumption request, as ``ConsumptionLedger/settleConsumptionRequest(_:)`` records it.
public struct ConsumptionSettlement: Sendable, Equatable {
    public var notificationID: String
    /// `pending` again for a retry (at ``nextAttemptAtMs``), or where it ends.
    public var state: ConsumptionState
    public var appleStatus: Int?
    public var appleError: Int?
    public var nextAttemptAtMs: Int64?
    /// When Apple's 202 was recorded.
    public var sentAtMs: Int64?

    public init(_ notificationID: String, state: ConsumptionState, appleStatus: Int? = nil, appleError: Int? = nil, nextAttemptAtMs: Int64? = nil, sentAtMs: Int64? = nil) {
        self.notificationID = notificationID
        self.state = state
        self.appleStatus = appleStatus
        self.appleError = appleError
        self.nextAttemptAtMs = nextAttemptAtMs
        self.sentAtMs = sentAtMs
    }
}
