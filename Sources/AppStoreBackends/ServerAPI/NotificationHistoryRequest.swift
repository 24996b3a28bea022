/// Get Notification History's body (`NotificationHistoryRequest`): the window of notifications
/// to read back, in ms since 1970. Every page of one reading sends this same body.
public struct NotificationHistoryRequest: Encodable, Sendable, Equatable {
    public var startDate: Int64
    public var endDate: Int64
    /// Only those Apple has not delivered yet, or is still retrying.
    public var onlyFailures: Bool?

    public init(startDate: Int64, endDate: Int64, onlyFailures: Bool = false) {
        self.startDate = startDate
        self.endDate = endDate
        self.onlyFailures = onlyFailures ? true : nil
    }
}
