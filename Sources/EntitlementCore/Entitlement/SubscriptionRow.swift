/// One subscriber as the run reads it from the store: identity, the receipt to replay, and the
/// contract columns as they stand.
public struct SubscriptionRow: Sendable, Equatable {
    /// `id`: the store's primary key.
    public var id: Int64
    /// `user_id`: the web service's user.
    public var userID: String
    /// `latest_receipt`: the base64 receipt to replay. Personal data: never logged.
    public var latestReceipt: String
    /// The contract columns before this run.
    public var state: SubscriptionState
    /// The web service stored a new receipt since the last verification.
    public var receiptUploaded: Bool

    public init(id: Int64, userID: String, latestReceipt: String, state: SubscriptionState, receiptUploaded: Bool = false) {
        self.id = id
        self.userID = userID
        self.latestReceipt = latestReceipt
        self.state = state
        self.receiptUploaded = receiptUploaded
    }
}
