/// Apple's error body: `{"errorCode": 4040010, "errorMessage": "Transaction id not found."}`.
struct ServerAPIErrorBody: Decodable {
    var errorCode: Int
    var errorMessage: String?
}
