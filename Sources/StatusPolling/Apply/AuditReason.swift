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

    public init?(rawValue: String) {
        switch rawValue {
        case "conflict": self = .conflict
        case "discovered": self = .discovered
        case "stale": self = .stale
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
        }
    }

    public var description: String { rawValue }
}
