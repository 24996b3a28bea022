/// Why one subscription could not be verified. A failure never changes a contract column: the row
/// keeps the entitlement it had, and only its bookkeeping records the failure.
public struct VerificationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable reason: a key of the run report and of `last_error`.
    public enum Reason: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable, Comparable {
        /// The connection failed, was refused or was dropped, after every attempt.
        case transport
        /// No answer within the request timeout, after every attempt.
        case timeout
        /// An HTTP status other than 200 (5xx and 429 after every attempt, other codes at once).
        case httpStatus = "http_status"
        /// HTTP 200 with a body that is not JSON (Apple's outage pages), after every attempt.
        case notJSON = "not_json"
        /// JSON, but not of the backend's shape (a value of the wrong type, no status).
        case unexpectedResponse = "unexpected_response"
        /// An Apple status other than success that is final or stayed after every attempt.
        case appleStatus = "apple_status"
        /// The answer is for another app's bundle id.
        case bundleMismatch = "bundle_mismatch"
        /// The row's `original_transaction_id` is not in the answer (another receipt was uploaded).
        case chainNotInReceipt = "chain_not_in_receipt"
        /// The receipt holds no auto-renewable subscription.
        case noSubscriptionInReceipt = "no_subscription_in_receipt"
        /// An iOS 6-style transaction receipt: the app must upload its app receipt instead.
        case legacyReceipt = "legacy_receipt"
        /// A signed payload (App Store Server API JWS) failed a check: chain, root, marker
        /// extension, validity, signature, app or environment. `last_error` names the check.
        case untrustedSignature = "untrusted_signature"
        /// The stored receipt could not be read locally for its transaction ids (App Store Server
        /// API rows enrolled with only a receipt).
        case receiptUnreadable = "receipt_unreadable"
        /// The chain already belongs to another row: another user replayed this receipt.
        case conflict
        /// The result could not be written (database locked past the busy timeout, disk full).
        case storeError = "store_error"

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var reason: Reason
    /// A short human explanation. Never holds a receipt or the shared secret.
    public var detail: String
    /// The backend's status when one was answered.
    public var upstreamStatus: UpstreamStatus?
    /// The HTTP status when one was answered.
    public var httpStatus: Int?
    /// The backend failed in a way that may pass (a timeout, a 5xx, an outage page, a status
    /// Apple says to retry), as opposed to an answer that will stay the same for this row.
    public var isTransient: Bool

    public init(_ reason: Reason, _ detail: String, upstreamStatus: UpstreamStatus? = nil, httpStatus: Int? = nil, isTransient: Bool = false) {
        self.reason = reason
        self.detail = detail
        self.upstreamStatus = upstreamStatus
        self.httpStatus = httpStatus
        self.isTransient = isTransient
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}
