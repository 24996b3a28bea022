/// Apple's `ExtendRenewalDateResponse`: whether the extension took, and the new expiry
/// (`effectiveDate`, UNIX ms). Not signed: the row takes the signed status asked afterwards.
struct ExtendRenewalDateResponse: Decodable {
    var originalTransactionId: String?
    var webOrderLineItemId: String?
    var success: Bool?
    var effectiveDate: Int64?
}
