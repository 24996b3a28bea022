/// Apple's verifyReceipt `status`, with what the poller does about each code.
///
/// A struct rather than an enum because 21100–21199 is a range and Apple adds codes over time;
/// an unknown code is kept as its number and treated as a permanent failure.
public struct VerifyReceiptStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 0: the receipt is valid.
    public static let valid = Self(rawValue: 0)
    /// 21000: the request was not a POST or its JSON was unreadable (a bug on our side).
    public static let badRequest = Self(rawValue: 21000)
    /// 21002: receipt-data malformed, or "a temporary issue": tried once more, then failed.
    public static let malformedReceiptData = Self(rawValue: 21002)
    /// 21003: the receipt could not be authenticated.
    public static let notAuthenticated = Self(rawValue: 21003)
    /// 21004: the shared secret does not match the account's: a configuration error.
    public static let sharedSecretMismatch = Self(rawValue: 21004)
    /// 21005: the receipt server is temporarily unavailable.
    public static let serverUnavailable = Self(rawValue: 21005)
    /// 21006: valid but the subscription expired (old iOS 6-style receipts); the body is still decoded.
    public static let validButExpired = Self(rawValue: 21006)
    /// 21007: a sandbox receipt was sent to production; resend it to the sandbox.
    public static let sandboxReceiptInProduction = Self(rawValue: 21007)
    /// 21008: a production receipt was sent to the sandbox; resend it to production.
    public static let productionReceiptInSandbox = Self(rawValue: 21008)
    /// 21009: internal data access error; try again later.
    public static let internalDataAccessError = Self(rawValue: 21009)
    /// 21010: the user account cannot be found or was deleted.
    public static let accountNotFound = Self(rawValue: 21010)

    /// 21100–21199: internal data access errors, retryable unless Apple says `is-retryable: false`.
    public var isInternalDataAccessRange: Bool { (21100...21199).contains(rawValue) }

    /// The body carries a receipt to decide on (0, and 21006 whose body still holds the transactions).
    public var carriesReceipt: Bool { self == .valid || self == .validButExpired }

    public var description: String { String(rawValue) }

    /// What to do with an answer of this status.
    public func retryDecision(isRetryable: Bool?) -> RetryDecision {
        switch self {
        case .serverUnavailable, .internalDataAccessError: return .retry
        case .malformedReceiptData: return .retryOnce
        case _ where isInternalDataAccessRange: return isRetryable == false ? .fail : .retry
        default: return .fail
        }
    }

    /// Whether a status that is not a receipt answer is worth another attempt.
    public enum RetryDecision: Sendable, Equatable {
        /// Apple says "try again": retry with backoff while attempts remain.
        case retry
        /// Retry a single time (21002 is either our bug or a passing issue), then fail.
        case retryOnce
        /// Permanent for this receipt: fail without retrying.
        case fail
    }
}
