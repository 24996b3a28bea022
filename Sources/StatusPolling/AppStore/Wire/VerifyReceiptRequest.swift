/// The JSON body POSTed to verifyReceipt.
struct VerifyReceiptRequest: Encodable, Sendable {
    /// `receipt-data`: the base64 app receipt.
    var receiptData: String
    /// `password`: the app's shared secret. Never logged.
    var password: String
    /// `exclude-old-transactions`: only the latest renewal of each subscription.
    var excludeOldTransactions: Bool

    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt-data"
        case password
        case excludeOldTransactions = "exclude-old-transactions"
    }
}
