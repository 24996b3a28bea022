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
        /// JSON, but not of verifyReceipt's shape (a value of the wrong type, no status).
        case unexpectedResponse = "unexpected_response"
        /// A non-zero Apple status that is final or stayed after every attempt.
        case appleStatus = "apple_status"
        /// `receipt.bundle_id` is another app's.
        case bundleMismatch = "bundle_mismatch"
        /// The row's `original_transaction_id` is not in the answer (another receipt was uploaded).
        case chainNotInReceipt = "chain_not_in_receipt"
        /// The receipt holds no auto-renewable subscription.
        case noSubscriptionInReceipt = "no_subscription_in_receipt"
        /// The chain already belongs to another row: another user replayed this receipt.
        case conflict
        /// The result could not be written (database locked past the busy timeout, disk full).
        case storeError = "store_error"

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var reason: Reason
    /// A short human explanation. Never holds a receipt or the shared secret.
    public var detail: String
    /// Apple's status when one was answered.
    public var appleStatus: VerifyReceiptStatus?
    /// The HTTP status when one was answered.
    public var httpStatus: Int?

    public init(_ reason: Reason, _ detail: String, appleStatus: VerifyReceiptStatus? = nil, httpStatus: Int? = nil) {
        self.reason = reason
        self.detail = detail
        self.appleStatus = appleStatus
        self.httpStatus = httpStatus
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}
