/// What became of one attempt, as the deliverer records it on the delivery.
public struct DeliveryOutcome: Sendable, Equatable {
    public enum Result: Sendable, Equatable {
        /// A 2xx: done; the user's next event may go.
        case delivered
        /// Failed; tried again at `nextAttemptAtMs`, the user's later events waiting behind it.
        case retry(nextAttemptAtMs: Int64)
        /// Failed past the policy's maximum age: given up (`events list --failed`, `events replay`).
        case dead
    }

    public var outboxID: Int64
    public var result: Result
    /// The endpoint's HTTP status, when it answered.
    public var status: Int?
    /// Why it failed, in a line without the body (nil when delivered).
    public var error: String?
    public var atMs: Int64

    public init(outboxID: Int64, result: Result, status: Int?, error: String?, atMs: Int64) {
        self.outboxID = outboxID
        self.result = result
        self.status = status
        self.error = error
        self.atMs = atMs
    }
}
