/// What every payload Apple signs carries: when it was signed, the instant its chain must be valid at.
protocol SignedPayload {
    /// ms since 1970.
    var signedDate: Int64? { get }
}
