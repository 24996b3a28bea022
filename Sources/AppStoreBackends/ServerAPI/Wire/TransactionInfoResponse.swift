/// Apple's `TransactionInfoResponse` (Get Transaction Info): one signed transaction.
struct TransactionInfoResponse: Decodable {
    var signedTransactionInfo: String
}
