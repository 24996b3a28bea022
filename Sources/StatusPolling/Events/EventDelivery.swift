/// One event to one endpoint, taken by a deliverer: the head of its user's pending events there.
public struct EventDelivery: Sendable, Equatable {
    /// `outbound_events.id`: the order of writing.
    public var outboxID: Int64
    /// The `webhook-id`.
    public var eventID: String
    public var userID: String
    public var body: String
    /// Attempts made before this one.
    public var attempts: Int
    /// When the event was written, ms.
    public var writtenAtMs: Int64
    /// When this endpoint got the event (its fan-out), ms: the age limit counts from here, so an
    /// endpoint added later has the whole limit to take the events kept for it.
    public var queuedAtMs: Int64

    public init(outboxID: Int64, eventID: String, userID: String, body: String, attempts: Int, writtenAtMs: Int64, queuedAtMs: Int64) {
        self.outboxID = outboxID
        self.eventID = eventID
        self.userID = userID
        self.body = body
        self.attempts = attempts
        self.writtenAtMs = writtenAtMs
        self.queuedAtMs = queuedAtMs
    }
}
