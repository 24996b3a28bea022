/// One paid period of the ledger as the MRR movement reads it: whose it is, the UTC days it was
/// bought and ends, its price spread over a month (``RevenueSQL/paidPeriods(_:subscriptions:toMs:environment:)``)
/// and its currency.
public struct PaidPeriod: Sendable, Equatable {
    public var subscriptionID: Int64
    /// Days since 1970-01-01 (UTC) of `purchased_at` and of `expires_at`.
    public var purchaseDay: Int64
    public var expiryDay: Int64
    public var monthlyMilliunits: Int64
    public var currency: String

    public init(subscriptionID: Int64, purchaseDay: Int64, expiryDay: Int64, monthlyMilliunits: Int64, currency: String) {
        self.subscriptionID = subscriptionID
        self.purchaseDay = purchaseDay
        self.expiryDay = expiryDay
        self.monthlyMilliunits = monthlyMilliunits
        self.currency = currency
    }

    /// A row of ``RevenueSQL/paidPeriods(_:subscriptions:toMs:environment:)``.
    @inlinable
    public init(_ row: inout some ColumnReader) throws {
        self.init(
            subscriptionID: try row.column(), purchaseDay: try row.column(), expiryDay: try row.column(), monthlyMilliunits: try row.column(),
            currency: try row.column())
    }
}
