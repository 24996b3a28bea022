/// What to ask Apple when extending renewal dates: whole days (1…90), Apple's reason code, and
/// the request identifier that makes the request safe to send again.
public struct RenewalExtensionRequest: Sendable, Equatable {
    /// Apple's `extendReasonCode`.
    public enum Reason: Int, Sendable, CaseIterable {
        case undeclared = 0
        case customerSatisfaction = 1
        case other = 2
        case serviceIssueOrOutage = 3

        /// The command line's names: undeclared, customer-satisfaction, other, service-issue (or 0…3).
        public init?(name: String) {
            switch name {
            case "undeclared", "0": self = .undeclared
            case "customer-satisfaction", "1": self = .customerSatisfaction
            case "other", "2": self = .other
            case "service-issue", "service-issue-or-outage", "3": self = .serviceIssueOrOutage
            default: return nil
            }
        }
    }

    /// Apple's bounds on `extendByDays`.
    public static let days = 1...90

    public var days: Int
    public var reason: Reason
    /// Apple's `requestIdentifier` (at most 128 characters; a UUID for a mass request).
    public var requestIdentifier: String

    public init(days: Int, reason: Reason, requestIdentifier: String) {
        self.days = days
        self.reason = reason
        self.requestIdentifier = requestIdentifier
    }
}
