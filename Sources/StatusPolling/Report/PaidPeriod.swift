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

    /// The database's error: a page that is not the shape its statement builds.
    public struct MalformedPage: Error, CustomStringConvertible {
        public var record: String
        public var description: String {
            "the ledger's paid periods came back in an unexpected shape (\"\(record.prefix(80))\"); no row was changed — report it with the database's version"
        }
    }

    /// A row of ``RevenueSQL/paidPeriods(_:subscriptions:toMs:environment:)`` (SQLite's).
    public init(_ row: inout some ColumnReader) throws {
        self.init(
            subscriptionID: try row.column(), purchaseDay: try row.column(), expiryDay: try row.column(), monthlyMilliunits: try row.column(),
            currency: try row.column())
    }

    /// A page of ``RevenueSQL/paidPeriods(_:subscriptions:toMs:environment:)`` packed into one
    /// text (PostgreSQL's): records split by `;`, fields by `,` (subscription, purchase day, expiry
    /// day, monthly milliunits, currency); nil (no paid period) is an empty page.
    public static func page(_ text: String?) throws -> [PaidPeriod] {
        guard let text, !text.isEmpty else { return [] }
        var periods: [PaidPeriod] = []
        periods.reserveCapacity(text.utf8.count / 32)
        for record in text.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
            let fields = record.split(separator: UInt8(ascii: ","), maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5, let s = integer(fields[0]), let p = integer(fields[1]), let e = integer(fields[2]), let m = integer(fields[3]),
                !fields[4].isEmpty
            else { throw MalformedPage(record: String(decoding: record, as: UTF8.self)) }
            periods.append(PaidPeriod(subscriptionID: s, purchaseDay: p, expiryDay: e, monthlyMilliunits: m, currency: String(decoding: fields[4], as: UTF8.self)))
        }
        return periods
    }

    /// A decimal integer (an optional minus sign, then digits), nil for anything else.
    static func integer(_ digits: Substring.UTF8View) -> Int64? {
        var value: Int64 = 0, negative = false, any = false
        for (index, byte) in digits.enumerated() {
            if index == 0, byte == UInt8(ascii: "-") { negative = true; continue }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            value = sum
            any = true
        }
        return any ? (negative ? -value : value) : nil
    }
}
