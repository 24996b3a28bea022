/// An outbox event with its delivery to one endpoint, as `events list` shows it (no body).
public struct StoredEvent: Sendable, Equatable {
    public var outboxID: Int64
    public var eventID: String
    public var type: String
    public var userID: String
    public var atMs: Int64
    /// Nil for an event not yet added to any endpoint's deliveries.
    public var endpoint: String?
    /// pending, delivered or dead; nil as `endpoint`.
    public var state: String?
    public var attempts: Int
    public var lastStatus: Int?
    public var lastError: String?

    public init(
        outboxID: Int64, eventID: String, type: String, userID: String, atMs: Int64, endpoint: String?, state: String?, attempts: Int,
        lastStatus: Int?, lastError: String?
    ) {
        self.outboxID = outboxID
        self.eventID = eventID
        self.type = type
        self.userID = userID
        self.atMs = atMs
        self.endpoint = endpoint
        self.state = state
        self.attempts = attempts
        self.lastStatus = lastStatus
        self.lastError = lastError
    }
}
