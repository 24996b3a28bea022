/// One simulated customer: a user of the web service, their receipt, one or two chains.
public struct SimulatedSubscriber: Sendable {
    public var index: Int
    /// The web service's `user_id` for this subscriber.
    public var userID: String
    /// "Production" or "Sandbox": the endpoint that accepts this receipt.
    public var environment: String
    /// The app's bundle id, written in every receipt (the population's).
    public var bundleID: String
    public var chains: [SimulatedChain]
    /// Receipts by version, written once each.
    let receipts = ReceiptCache()
}
