/// One Send Consumption Information request the simulated App Store took (202): the truth of
/// what the developer answered, beside the refund decision it weighed on.
public struct SimulatedConsumptionAnswer: Sendable, Equatable {
    public var transactionID: String
    public var environment: String
    /// The simulated clock when it came, ms.
    public var atMs: Int64
    /// The JSON body as received.
    public var body: String
    /// `refundPreference`, nil when left out.
    public var refundPreference: String?
    /// Apple's seeded decision on the request before the answer ("refunded", "declined"; nil:
    /// no request asked about this transaction by then) and after it weighed (``SimulatedChain/weighConsumptionAnswer(transactionID:refundPreference:at:seed:)``).
    public var plannedDecision: String?
    public var decision: String?

    public init(
        transactionID: String, environment: String, atMs: Int64, body: String, refundPreference: String?, plannedDecision: String? = nil, decision: String? = nil
    ) {
        self.transactionID = transactionID
        self.environment = environment
        self.atMs = atMs
        self.body = body
        self.refundPreference = refundPreference
        self.plannedDecision = plannedDecision
        self.decision = decision
    }
}
