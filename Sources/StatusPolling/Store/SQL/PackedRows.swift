/// A page of rows PostgreSQL packed into one text (``aggregate(_:)``), read row by row through
/// ``ColumnReader``, so a statement's mapping is the same whichever way its rows come back.
/// PostgresNIO's work per row (≈ 5 µs: a data row decoded, a task resumed) was most of the
/// report's client time over millions of rows; one text a page costs the server a little
/// formatting and the client one pass over its bytes, nothing allocated but the values read.
///
/// Records are split by `;`, fields by `,`; an empty field is NULL. Fields are integers or texts
/// that never hold `,` or `;` (reasons, sources, environments, currencies): one that did would
/// shift its record's fields, and the record is refused as malformed, never misread.
public struct PackedRows: ColumnReader {
    @usableFromInline let bytes: UnsafeBufferPointer<UInt8>
    @usableFromInline var index = 0
    /// The current record's fields are all read: the next read is one too many.
    @usableFromInline var recordIsRead = false

    @usableFromInline static let comma = UInt8(ascii: ","), semicolon = UInt8(ascii: ";")

    @usableFromInline init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The SQL of one text holding the group's rows of `fields` (SQL expressions), in no order.
    /// `string_agg`'s `ORDER BY` sorts each page again on the server (four times the cost of the
    /// page's text for the ledger's paid periods): a reader that needs an order sorts the page.
    public static func aggregate(_ fields: [String]) -> String {
        "string_agg(\(record(fields)), ';')"
    }

    /// The SQL of one record of ``aggregate(_:)``: `fields` as texts between commas. One
    /// `concat_ws` rather than `||` between the fields: 15 fields of 5,000 rows took the server
    /// 6.8 ms against 7.9 ms (`concat_ws` leaves a NULL out, hence the `coalesce`).
    public static func record(_ fields: [String]) -> String {
        "concat_ws(',', \(fields.map { "coalesce(CAST(\($0) AS TEXT), '')" }.joined(separator: ", ")))"
    }

    /// Each record of `page` read by `read`, which must read every field of it; nil or empty:
    /// no record. Throws ``MalformedPage`` for a record of another shape.
    @inlinable
    public static func rows<Row>(_ page: String?, _ read: (inout PackedRows) throws -> Row) throws -> [Row] {
        guard var page, !page.isEmpty else { return [] }
        return try page.withUTF8 { bytes in
            var reader = PackedRows(bytes)
            var rows: [Row] = []
            while reader.index < bytes.count {
                let start = reader.index
                reader.recordIsRead = false
                do {
                    rows.append(try read(&reader))
                } catch {
                    throw reader.malformed(from: start)
                }
                guard reader.recordIsRead else { throw reader.malformed(from: start) }
                if reader.index < bytes.count {
                    reader.index += 1
                    guard reader.index < bytes.count else { throw reader.malformed(from: start) }
                }
            }
            return rows
        }
    }

    /// The next field's bytes, the reader past its separator; nil when it is empty (NULL).
    @inlinable
    mutating func field() throws -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard !recordIsRead else { throw MalformedPage(record: "") }
        let start = index
        while index < bytes.count, bytes[index] != Self.comma, bytes[index] != Self.semicolon { index += 1 }
        let end = index
        if index < bytes.count, bytes[index] == Self.comma { index += 1 } else { recordIsRead = true }
        return start == end ? nil : bytes[start..<end]
    }

    @inlinable
    public mutating func text() throws -> String? {
        try field().map { String(decoding: UnsafeBufferPointer(rebasing: $0), as: UTF8.self) }
    }

    @inlinable
    public mutating func integer() throws -> Int64? {
        guard let digits = try field() else { return nil }
        var value: Int64 = 0
        let negative = digits.first == UInt8(ascii: "-")
        guard digits.count > (negative ? 1 : 0) else { throw MalformedPage(record: "") }
        for byte in digits.dropFirst(negative ? 1 : 0) {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { throw MalformedPage(record: "") }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = negative ? times.subtractingReportingOverflow(Int64(digit)) : times.addingReportingOverflow(Int64(digit))
            guard !o1, !o2 else { throw MalformedPage(record: "") }
            value = sum
        }
        return value
    }

    public mutating func text(equals text: String) throws -> Bool {
        guard let field = try field() else { return false }
        var text = text
        return text.withUTF8 { $0.elementsEqual(field) }
    }

    /// The error for the record that begins at `start`, shown up to its end.
    @usableFromInline func malformed(from start: Int) -> MalformedPage {
        let end = bytes[start...].firstIndex(of: Self.semicolon) ?? bytes.count
        return MalformedPage(record: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
    }

    /// The database's error: a page that is not the shape its statement builds.
    public struct MalformedPage: Error, CustomStringConvertible {
        public var record: String

        @usableFromInline init(record: String) {
            self.record = record
        }

        public var description: String {
            "the database's packed rows came back in an unexpected shape (\"\(record.prefix(80))\"); no row was changed — report it with the database's version"
        }
    }
}
