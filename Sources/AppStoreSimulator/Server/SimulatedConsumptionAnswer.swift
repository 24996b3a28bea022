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

    public init(transactionID: String, environment: String, atMs: Int64, body: String, refundPreference: String?) {
        self.transactionID = transactionID
        self.environment = environment
        self.atMs = atMs
        self.body = body
        self.refundPreference = refundPreference
    }
}
