/// Apple's `errorCode`s the poller acts on. Apple documents dozens; these are the ones whose
/// handling differs from "this row failed, try next night".
public enum ServerAPIErrorCode: Int, Sendable {
    /// The customer's account was not found yet; retry.
    case accountNotFoundRetryable = 4_040_002
    /// The app was not found; Apple says retry.
    case appNotFoundRetryable = 4_040_004
    /// The original transaction id was not found yet; retry.
    case originalTransactionIdNotFoundRetryable = 4_040_006
    /// A temporary error; retry.
    case generalInternalRetryable = 5_000_001
    /// An internal error; retry after a longer pause.
    case generalInternal = 5_000_000
    /// The transaction id is not in this environment: the sandbox is tried next.
    case transactionIdNotFound = 4_040_010
    /// The app is not known to Apple under this bundle id: every request would fail the same way.
    case appNotFound = 4_040_003
    /// The request's app identifier is invalid: every request would fail the same way.
    case invalidAppIdentifier = 4_000_002
    /// Too many requests.
    case rateLimitExceeded = 4_290_000

    /// How the client treats a code.
    enum Handling {
        case retry
        /// Retry after a longer pause (5000000).
        case retryLater
        /// Another environment may know the id.
        case otherEnvironment
        /// Apple refuses the `bid`: the run stops.
        case refusesApp
    }

    var handling: Handling {
        switch self {
        case .accountNotFoundRetryable, .appNotFoundRetryable, .originalTransactionIdNotFoundRetryable, .generalInternalRetryable, .rateLimitExceeded:
            .retry
        case .generalInternal: .retryLater
        case .transactionIdNotFound: .otherEnvironment
        case .appNotFound, .invalidAppIdentifier: .refusesApp
        }
    }
}
