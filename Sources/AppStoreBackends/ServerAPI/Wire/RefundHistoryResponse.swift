/// Apple's `RefundHistoryResponse` (Get Refund History v2): up to 20 refunded transactions by
/// `revocationDate`, and the `revision` to ask for the next page while `hasMore`.
struct RefundHistoryResponse: Decodable {
    var signedTransactions: [String]
    var revision: String?
    var hasMore: Bool
}
