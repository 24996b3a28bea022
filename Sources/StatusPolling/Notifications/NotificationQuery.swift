/// Which recorded notifications to list (`status-poller notifications list`).
public struct NotificationQuery: Sendable, Equatable {
    /// Only those no row took.
    public var unmatchedOnly: Bool
    /// Only those received at or after this instant, ms.
    public var sinceMs: Int64?
    /// Only those applied to a row of this user.
    public var userID: String?
    public var limit: Int

    public init(unmatchedOnly: Bool = false, sinceMs: Int64? = nil, userID: String? = nil, limit: Int = 100) {
        self.unmatchedOnly = unmatchedOnly
        self.sinceMs = sinceMs
        self.userID = userID
        self.limit = limit
    }
}
