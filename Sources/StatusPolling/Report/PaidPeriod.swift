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
        guard var text, !text.isEmpty else { return [] }
        // One pass over the bytes, nothing allocated but the periods: a page holds tens of thousands.
        return try text.withUTF8 { bytes in
            var periods: [PaidPeriod] = []
            periods.reserveCapacity(bytes.count / 32)
            var index = 0
            func integer() -> Int64? {
                var value: Int64 = 0, digits = 0
                let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
                if negative { index += 1 }
                while index < bytes.count, bytes[index] != UInt8(ascii: ",") {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    let (times, o1) = value.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times.addingReportingOverflow(Int64(digit))
                    guard !o1, !o2 else { return nil }
                    value = sum
                    digits += 1
                    index += 1
                }
                guard digits > 0, index < bytes.count else { return nil }
                index += 1
                return negative ? -value : value
            }
            while index < bytes.count {
                let start = index
                func malformed() -> MalformedPage {
                    let end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
                    return MalformedPage(record: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
                }
                guard let s = integer(), let p = integer(), let e = integer(), let m = integer() else { throw malformed() }
                let currencyStart = index
                while index < bytes.count, bytes[index] != UInt8(ascii: ";"), bytes[index] != UInt8(ascii: ",") { index += 1 }
                guard index > currencyStart, index == bytes.count || bytes[index] == UInt8(ascii: ";") else { throw malformed() }
                let currency = String(decoding: UnsafeBufferPointer(rebasing: bytes[currencyStart..<index]), as: UTF8.self)
                periods.append(PaidPeriod(subscriptionID: s, purchaseDay: p, expiryDay: e, monthlyMilliunits: m, currency: currency))
                if index < bytes.count {
                    index += 1
                    guard index < bytes.count else { throw MalformedPage(record: "") }
                }
            }
            return periods
        }
    }
}
