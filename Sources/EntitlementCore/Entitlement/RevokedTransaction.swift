/// A period of a chain that Apple refunded or revoked while another period is the chain's
/// current one: the row keeps its access, and the trail records the refund
/// (`refunded_earlier_period`) with this transaction's id and revocation date.
public struct RevokedTransaction: Sendable, Equatable {
    public var transactionID: String?
    public var productID: String?
    /// `revocationDate` (`cancellation_date_ms`), ms.
    public var revokedAtMs: Int64

    public init(transactionID: String?, productID: String?, revokedAtMs: Int64) {
        self.transactionID = transactionID
        self.productID = productID
        self.revokedAtMs = revokedAtMs
    }
}
