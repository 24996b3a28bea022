extension FaultConfiguration {
    /// The faults of the App Store Server API, drawn apart from verifyReceipt's (``Fault``) so that
    /// adding them changed none of verifyReceipt's draws.
    public enum ServerAPIFault: String, CaseIterable, Sendable, Codable {
        /// HTTP 404, 4040002 "Account not found. Please try again."
        case accountNotFoundRetryable = "http_404_4040002"
        /// HTTP 404, 4040004 "App not found. Please try again."
        case appNotFoundRetryable = "http_404_4040004"
        /// HTTP 404, 4040006 "Original transaction id not found. Please try again."
        case originalTransactionIDNotFoundRetryable = "http_404_4040006"
        /// HTTP 500, 5000001 "An unknown error occurred. Please try again."
        case internalRetryable = "http_500_5000001"
        /// HTTP 500, 5000000 "An unknown error occurred." (not said to be retryable)
        case internalError = "http_500_5000000"
        /// HTTP 429, 4290000, with `Retry-After` in UNIX milliseconds.
        case rateLimited = "http_429"
        /// The right answer, after ``FaultConfiguration/slowAnswerDelay``.
        case slowAnswer = "slow_answer"
        /// The connection closes mid-answer.
        case droppedConnection = "dropped_connection"
        /// HTTP 200 whose first signed transaction had one payload byte changed after signing.
        case tamperedSignature = "tampered_signature"

        /// Apple's HTTP status and `errorCode` for the faults that answer with an error body.
        var error: (status: Int, code: Int, message: String)? {
            switch self {
            case .accountNotFoundRetryable: return (404, 4_040_002, "Account not found. Please try again.")
            case .appNotFoundRetryable: return (404, 4_040_004, "App not found. Please try again.")
            case .originalTransactionIDNotFoundRetryable: return (404, 4_040_006, "Original transaction id not found. Please try again.")
            case .internalRetryable: return (500, 5_000_001, "An unknown error occurred. Please try again.")
            case .internalError: return (500, 5_000_000, "An unknown error occurred.")
            case .rateLimited: return (429, 4_290_000, "Rate limit exceeded.")
            case .slowAnswer, .droppedConnection, .tamperedSignature: return nil
            }
        }

        /// The Server API kind that stands for a verifyReceipt kind a caller leaves out of
        /// ``FaultConfiguration/spread(total:latency:slowAnswerDelay:excluding:excludingServerAPI:)``.
        init?(counterpartOf fault: Fault) {
            switch fault {
            case .slowAnswer: self = .slowAnswer
            case .droppedConnection: self = .droppedConnection
            case .rateLimited: self = .rateLimited
            default: return nil
            }
        }
    }

    /// The sum of the Server API's per-request fault rates.
    public var serverAPITotalRate: Double { serverAPIRates.values.reduce(0, +) }

    func serverAPIFault(draw: Double) -> ServerAPIFault? {
        var cumulative = 0.0
        for fault in ServerAPIFault.allCases {
            cumulative += serverAPIRates[fault] ?? 0
            if draw < cumulative { return fault }
        }
        return nil
    }
}
