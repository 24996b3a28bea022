/// Why a body sent to the receiver was refused: nothing of it is stored, a counter and a log line
/// (never the body) say so, and the sender gets the 4xx the reason names.
public struct NotificationRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable, CaseIterable {
        /// Not JSON, or neither a V2 (`signedPayload`) nor a V1 (`notification_type`) notification, or
        /// a V2 payload Apple signed that is not of the shape Apple documents (`payload_shape`).
        case malformed
        /// A V2 signed payload that failed a check of its signature chain or claims.
        case signature
        /// A V1 notification whose `password` is not the shared secret.
        case password
        /// A V1 notification while no shared secret is configured: V1 cannot be authenticated.
        case versionOneDisabled = "v1_disabled"
        /// For another app (a V1 `bid` that is not ours).
        case otherApp = "other_app"
        /// Larger than `--max-body-bytes`.
        case tooLarge = "too_large"

        /// The HTTP status the sender gets.
        public var httpStatus: Int {
            switch self {
            case .password, .versionOneDisabled: return 401
            case .tooLarge: return 413
            case .malformed, .signature, .otherApp: return 400
            }
        }
    }

    public var reason: Reason
    /// What was found; never the body or a secret.
    public var detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}
