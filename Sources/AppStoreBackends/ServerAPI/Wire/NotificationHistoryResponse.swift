/// Get Notification History's answer (`NotificationHistoryResponse`): at most 20 records, each
/// the `signedPayload` Apple sent (or tried to) and its send attempts, and whether more pages follow.
public struct NotificationHistoryResponse: Decodable, Sendable, Equatable {
    public struct Record: Decodable, Sendable, Equatable {
        public var signedPayload: String
        public var sendAttempts: [SendAttempt]?
    }

    /// One try of Apple's to deliver it: when, and how it went (`SUCCESS`, `TIMED_OUT`, …).
    public struct SendAttempt: Decodable, Sendable, Equatable {
        public var attemptDate: Int64?
        public var sendAttemptResult: String?
    }

    public var notificationHistory: [Record]
    public var hasMore: Bool
    /// Passed back as the `paginationToken` query parameter, with the identical body, for the next page.
    public var paginationToken: String?
}
