/// What one pass of the sender did (`consumption send` prints it; the logs count it).
public struct ConsumptionPass: Sendable, Equatable, Codable {
    /// Apple's 202.
    public var sent = 0
    /// Of those, recorded after the deadline (the send began before it).
    public var late = 0
    /// Apple refused the answer (a 4xx).
    public var refused = 0
    /// Nothing may be sent: the web service recorded no consent (or, at the deadline, nothing).
    public var noConsent = 0
    /// The web service has not written about the customer yet: looked at again before the deadline.
    public var awaitingConsent = 0
    /// The deadline passed first.
    public var expired = 0
    /// A 5xx, a 429 or a failed connection: tried again later.
    public var retried = 0
    /// Another sender held it.
    public var skipped = 0

    public init() {}

    /// Nothing happened.
    public var isEmpty: Bool { self == ConsumptionPass() }

    public static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.sent += rhs.sent
        sum.late += rhs.late
        sum.refused += rhs.refused
        sum.noConsent += rhs.noConsent
        sum.awaitingConsent += rhs.awaitingConsent
        sum.expired += rhs.expired
        sum.retried += rhs.retried
        sum.skipped += rhs.skipped
        return sum
    }
}
