/// One result row of a shared statement, read left to right in the order its SELECT names the
/// columns: what a store adapts its own row to (GRDB's `Row`, PostgresNIO's), so the mapping of a
/// row into the library's types is written once, beside its SQL. Text and integers only, as
/// ``SQLValue`` binds them.
public protocol ColumnReader {
    /// The next column as text; nil when it is NULL.
    mutating func text() throws -> String?
    /// The next column as an integer; nil when it is NULL.
    mutating func integer() throws -> Int64?
    /// Whether the next column is exactly `text` (false when it is NULL), compared where it lies:
    /// a writer checks that a row still holds the receipt it sent without copying 3 KB a row.
    mutating func text(equals text: String) throws -> Bool
}

extension ColumnReader {
    /// The next column; nil when it is NULL.
    @inlinable
    public mutating func column<Value: ColumnValue>(_: Value.Type = Value.self) throws -> Value? {
        try Value.read(&self)
    }

    /// The next column, which the schema never leaves NULL.
    @inlinable
    public mutating func column<Value: ColumnValue>(_: Value.Type = Value.self) throws -> Value {
        guard let value = try Value.read(&self) else { throw ColumnReadError.null("\(Value.self)") }
        return value
    }
}
