import Foundation

/// One App Store Server API request as the HTTP layer hands it to
/// ``AppStoreSimulator/answerServerAPI(_:)``: which endpoint, for which id, with which token.
public struct ServerAPIRequest: Sendable {
    /// The endpoints the simulator serves, named by their path under the base URL.
    public enum Endpoint: String, Sendable, CaseIterable {
        /// Get All Subscription Statuses.
        case allSubscriptionStatuses = "inApps/v1/subscriptions"
        /// Get Transaction History, version 2.
        case transactionHistory = "inApps/v2/history"
        /// Get Transaction Info.
        case transactionInfo = "inApps/v1/transactions"
        /// Look Up Order ID: the path's id is an order id.
        case orderLookup = "inApps/v1/lookup"
        /// Get Refund History, version 2.
        case refundHistory = "inApps/v2/refund/lookup"
    }

    public var environment: SimulatedEnvironment
    public var endpoint: Endpoint
    /// The `{transactionId}` path segment (`{orderId}` for Look Up Order ID).
    public var transactionID: String
    /// The `Authorization` header, if any.
    public var authorization: String?
    /// Query parameters; a name may repeat (`status=1&status=2`).
    public var query: [String: [String]]
    /// The wall-clock instant the request arrived: bearer tokens expire in real time, not in
    /// simulated time.
    public var receivedAt: Date

    public init(
        environment: SimulatedEnvironment, endpoint: Endpoint, transactionID: String, authorization: String?,
        query: [String: [String]] = [:], receivedAt: Date = Date()
    ) {
        self.environment = environment
        self.endpoint = endpoint
        self.transactionID = transactionID
        self.authorization = authorization
        self.query = query
        self.receivedAt = receivedAt
    }
}
