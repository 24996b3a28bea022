/// Apple's `MassExtendRenewalDateResponse`: the request identifier it took.
struct MassExtendRenewalDateResponse: Decodable {
    var requestIdentifier: String
}
