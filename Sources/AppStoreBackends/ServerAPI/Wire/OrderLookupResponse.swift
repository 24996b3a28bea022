/// Apple's `OrderLookupResponse` (Look Up Order ID): `status` 0 valid, 1 invalid, and the order's
/// signed transactions.
struct OrderLookupResponse: Decodable {
    var status: Int
    var signedTransactions: [String]?
}
