/// Which recorded consumption requests to read (`consumption list`, `history`, the report).
public struct ConsumptionQuery: Sendable, Equatable {
    /// Only these states; nil: all.
    public var states: [ConsumptionState]?
    public var userID: String?
    public var notificationID: String?
    public var limit: Int

    public init(states: [ConsumptionState]? = nil, userID: String? = nil, notificationID: String? = nil, limit: Int = 1000) {
        self.states = states
        self.userID = userID
        self.notificationID = notificationID
        self.limit = limit
    }

    /// `--failed`: refused by Apple, or expired unanswered.
    public static let failedStates: [ConsumptionState] = [.refused, .expired]
}
