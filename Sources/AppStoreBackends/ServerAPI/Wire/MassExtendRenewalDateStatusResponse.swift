/// Apple's `MassExtendRenewalDateStatusResponse` (Get Status of Subscription Renewal Date
/// Extensions): whether the App Store finished, when, and how many it extended or could not.
struct MassExtendRenewalDateStatusResponse: Decodable {
    var requestIdentifier: String?
    var complete: Bool?
    var completeDate: Int64?
    var succeededCount: Int64?
    var failedCount: Int64?
}
