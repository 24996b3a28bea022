import EntitlementCore

/// One `CONSUMPTION_REQUEST` and the answer to it, as `consumption_requests` holds it, with what
/// the web service wrote about the customer (`consumption_consents`) read beside it.
public struct ConsumptionRequestRecord: Sendable, Equatable {
    /// The notification that asked (`notificationUUID`; V1: `v1:` and the body's SHA-256).
    public var notificationID: String
    /// The transaction Apple names: the path of Send Consumption Information.
    public var transactionID: String
    public var originalTransactionID: String?
    public var subscriptionID: Int64
    public var userID: String
    /// Where to send the answer; nil (V1 without one): production.
    public var environment: AppStoreEnvironment?
    /// The request's `signedDate` (V1: the instant its data was true), ms.
    public var requestedAtMs: Int64
    /// `requestedAtMs` + 12 h: Apple's window for the answer.
    public var deadlineMs: Int64
    /// When the asked-about period began (the transaction's purchase date), ms.
    public var periodStartedAtMs: Int64?
    /// What we knew when the request came: the row held the chain and was entitled through the
    /// period, with no failed verification standing.
    public var deliveryStatus: DeliveryStatus
    /// Refunds this customer had before the request (their trail's `refunded…` rows).
    public var priorRefunds: Int
    public var state: ConsumptionState
    /// Sends begun (a claim counts one).
    public var attempts: Int
    /// When the sender may take it next (a retry's time, or a claim's lease), ms.
    public var nextAttemptAtMs: Int64
    /// The HTTP status of Apple's last answer.
    public var appleStatus: Int?
    /// Apple's `errorCode` of the last answer.
    public var appleError: Int?
    /// The JSON sent (fixed at the first attempt, so a resend sends the same).
    public var body: String?
    /// The preference in `body`, for the report (nil: none sent).
    public var refundPreference: RefundPreference?
    /// When Apple's 202 was recorded, ms.
    public var sentAtMs: Int64?
    /// Apple's decision, from a later `REFUND` (`refunded`) or `REFUND_DECLINED` (`declined`) of the transaction.
    public var decision: String?
    public var decidedAtMs: Int64?
    /// `consumption_consents.customer_consented` of the user; nil: never written (no consent).
    public var customerConsented: Bool?
    /// `consumption_consents.last_used_at` of the user, ms.
    public var lastUsedAtMs: Int64?

    public init(
        notificationID: String, transactionID: String, originalTransactionID: String?, subscriptionID: Int64, userID: String,
        environment: AppStoreEnvironment?, requestedAtMs: Int64, deadlineMs: Int64, periodStartedAtMs: Int64?, deliveryStatus: DeliveryStatus,
        priorRefunds: Int = 0, state: ConsumptionState = .pending, attempts: Int = 0, nextAttemptAtMs: Int64, appleStatus: Int? = nil,
        appleError: Int? = nil, body: String? = nil, refundPreference: RefundPreference? = nil, sentAtMs: Int64? = nil, decision: String? = nil,
        decidedAtMs: Int64? = nil, customerConsented: Bool? = nil, lastUsedAtMs: Int64? = nil
    ) {
        self.notificationID = notificationID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.subscriptionID = subscriptionID
        self.userID = userID
        self.environment = environment
        self.requestedAtMs = requestedAtMs
        self.deadlineMs = deadlineMs
        self.periodStartedAtMs = periodStartedAtMs
        self.deliveryStatus = deliveryStatus
        self.priorRefunds = priorRefunds
        self.state = state
        self.attempts = attempts
        self.nextAttemptAtMs = nextAttemptAtMs
        self.appleStatus = appleStatus
        self.appleError = appleError
        self.body = body
        self.refundPreference = refundPreference
        self.sentAtMs = sentAtMs
        self.decision = decision
        self.decidedAtMs = decidedAtMs
        self.customerConsented = customerConsented
        self.lastUsedAtMs = lastUsedAtMs
    }

    /// Apple's 202 came before the deadline.
    public var answeredOnTime: Bool { sentAtMs.map { $0 <= deadlineMs } ?? false }
}
