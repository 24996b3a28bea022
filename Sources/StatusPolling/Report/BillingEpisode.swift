/// A billing problem of one subscription, from the failed renewal to its end: opened when the row
/// enters billing retry or a grace period, closed as exactly one ``Outcome``, or open (censored at
/// the report's end).
public struct BillingEpisode: Sendable, Equatable {
    public enum Outcome: String, Sendable, CaseIterable, Codable {
        /// A later `expires_at`: Apple charged again.
        case recovered
        /// The retry ended without a renewal (expired with intent 2, or the retry flag cleared).
        case lost
        /// Auto-renew turned off while the episode was open.
        case cancelled
        /// Refunded while open.
        case refunded
    }

    public var subscriptionID: Int64
    /// Day 0: the failed renewal's `expires_at` (Apple's clock), ms.
    public var startMs: Int64
    /// When the trail first showed it (a poll or a notification), ms: `seenAtMs - startMs` is the detection lag.
    public var seenAtMs: Int64
    /// The grace period's end, when the episode had one.
    public var graceEndsMs: Int64?
    public var outcome: Outcome?
    /// When the trail showed the outcome, ms.
    public var closedAtMs: Int64?

    /// Whole days from day 0 to the close (or to `endMs` while open), never negative.
    public func days(endMs: Int64) -> Int {
        Int(max(0, ((closedAtMs ?? endMs) - startMs) / 86_400_000))
    }

    /// Whole days from day 0 until the trail first showed it, never negative: the day it joins the
    /// recovery curve's risk set.
    public var daysUntilSeen: Int {
        Int(max(0, (seenAtMs - startMs) / 86_400_000))
    }

    /// Recovered before its grace period ended: no break in paid service.
    public var recoveredInGrace: Bool {
        guard outcome == .recovered, let grace = graceEndsMs, let closed = closedAtMs else { return false }
        return closed < grace
    }
}
