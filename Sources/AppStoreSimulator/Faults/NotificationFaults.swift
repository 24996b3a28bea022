/// How the simulated App Store's deliveries go wrong, each a probability per attempt drawn from
/// the seed. A receiver that answers 503 (or is down) needs no fault here: Apple retries any
/// answer outside 200–206 on its schedule, and so does the simulator.
public struct NotificationFaults: Sendable, Equatable {
    /// The attempt never reaches the receiver (Apple records `NO_RESPONSE`); retried.
    public var lost: Double
    /// The receiver takes it, but Apple records a timeout and sends it again: a duplicate.
    public var duplicated: Double
    /// The first attempt leaves up to ``maxDelayMs`` late, so a later notification of the same
    /// subscription may arrive first (Apple promises no order).
    public var delayed: Double
    public var maxDelayMs: Int64

    public init(lost: Double = 0, duplicated: Double = 0, delayed: Double = 0, maxDelayMs: Int64 = 3_600_000) {
        self.lost = lost
        self.duplicated = duplicated
        self.delayed = delayed
        self.maxDelayMs = maxDelayMs
    }

    public static let none = NotificationFaults()
}
