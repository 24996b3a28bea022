/// How the deliverer retries, gives up and keeps: documented defaults, all settable in the config
/// file (docs/EVENTS.md).
public struct DeliveryPolicy: Sendable, Equatable {
    /// The first retry's delay; each further retry doubles it, up to ``maximumDelay``.
    public var firstDelay: Duration = .seconds(5)
    public var maximumDelay: Duration = .seconds(3600)
    /// An event not delivered this long after its endpoint got it (the fan-out: when it was
    /// written, or when the endpoint was added) is dead-lettered (3 days).
    public var maximumAge: Duration = .seconds(3 * 86_400)
    /// Delivered events, and dead ones, are deleted this long after they were written (7 days).
    public var keepDelivered: Duration = .seconds(7 * 86_400)
    /// Deliveries in flight per endpoint: one per user at a time, this many users at once.
    public var concurrency = 64
    /// One request's deadline: an endpoint slower than this counts as failed (and is retried).
    public var requestTimeout: Duration = .seconds(10)
    /// How long a deliverer holds a delivery it took (others skip it meanwhile).
    public var lease: Duration = .seconds(60)

    public init() {}

    /// The delay before retry `attempt` (1: after the first failure): exponential, capped, and
    /// scaled by `jitter` in 0..<1 to between half and all of it, so failed deliveries to one
    /// endpoint do not all come back at once.
    public func delay(afterAttempt attempt: Int, jitter: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let full = min(Double(firstDelay.milliseconds) * Double(1 << exponent), Double(maximumDelay.milliseconds))
        return .milliseconds(Int64(full * (0.5 + 0.5 * min(max(jitter, 0), 1))))
    }
}
