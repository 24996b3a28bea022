/// Why an audit row was written, as `subscription_events.reason` holds it: a change in lifecycle
/// words, a chain that belongs to another row, a chain found in a receipt and enrolled, or an
/// answer older than what the row already holds. Rows written before this type keep their text.
public enum AuditReason: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    case transition(SubscriptionTransition)
    /// The answer's chain belongs to another row: nothing was granted.
    case conflict
    /// Another chain of the receipt, enrolled as a new row of the same user.
    case discovered
    /// The answer was older than the Apple data the row holds: nothing was changed.
    case stale
    /// Apple refunded or revoked a period of the chain other than the row's current one (a
    /// customer got last month back and keeps subscribing): a refund, and no access taken. The
    /// audit row names the transaction and its revocation date.
    case refundedEarlierPeriod
    /// Apple reversed the refund of a period other than the row's current one.
    case refundReversedEarlierPeriod

    public init?(rawValue: String) {
        switch rawValue {
        case "conflict": self = .conflict
        case "discovered": self = .discovered
        case "stale": self = .stale
        case "refunded_earlier_period": self = .refundedEarlierPeriod
        case "refund_reversed_earlier_period": self = .refundReversedEarlierPeriod
        default:
            guard let transition = SubscriptionTransition(rawValue: rawValue) else { return nil }
            self = .transition(transition)
        }
    }

    public var rawValue: String {
        switch self {
        case .transition(let transition): return transition.rawValue
        case .conflict: return "conflict"
        case .discovered: return "discovered"
        case .stale: return "stale"
        case .refundedEarlierPeriod: return "refunded_earlier_period"
        case .refundReversedEarlierPeriod: return "refund_reversed_earlier_period"
        }
    }

    public var description: String { rawValue }
}
