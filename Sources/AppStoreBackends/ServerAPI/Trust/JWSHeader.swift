/// The protected header of Apple's JWS: the algorithm and the certificate chain (base64 DER,
/// leaf first).
struct JWSHeader: Decodable {
    var alg: String?
    var x5c: [String]?
}
