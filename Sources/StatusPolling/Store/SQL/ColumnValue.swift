/// A Swift type a column of the shared SQL holds, read as text or as an integer.
public protocol ColumnValue {
    /// The next column of `row` as this type; nil when it is NULL.
    static func read(_ row: inout some ColumnReader) throws -> Self?
}

extension String: ColumnValue {
    @inlinable
    public static func read(_ row: inout some ColumnReader) throws -> String? { try row.text() }
}

extension Int64: ColumnValue {
    @inlinable
    public static func read(_ row: inout some ColumnReader) throws -> Int64? { try row.integer() }
}

extension Int: ColumnValue {
    @inlinable
    public static func read(_ row: inout some ColumnReader) throws -> Int? { try row.integer().map { Int($0) } }
}

extension Int32: ColumnValue {
    @inlinable
    public static func read(_ row: inout some ColumnReader) throws -> Int32? {
        guard let value = try row.integer() else { return nil }
        guard let narrow = Int32(exactly: value) else { throw ColumnReadError.outOfRange(value, "Int32") }
        return narrow
    }
}

/// A flag stored as 0 or 1.
extension Bool: ColumnValue {
    @inlinable
    public static func read(_ row: inout some ColumnReader) throws -> Bool? { try row.integer().map { $0 != 0 } }
}
