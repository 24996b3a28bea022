/// Apple's `HistoryResponse` (Get Transaction History v2): one page of signed transactions, and the
/// `revision` to ask for the next while `hasMore`.
struct HistoryResponse: Decodable {
    var revision: String?
    var hasMore: Bool
    var bundleId: String?
    var appAppleId: Int64?
    var environment: String?
    var signedTransactions: [String]
}
