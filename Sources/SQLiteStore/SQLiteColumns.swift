import GRDB
import GRDBSQLite
#if canImport(Glibc)
    import Glibc
#endif
import StatusPolling

/// A result row of a stepped statement read left to right as a ``ColumnReader``: how the SQLite
/// store reads the rows of the library's shared statements, straight from SQLite (no row object,
/// no copy of the other cells). Reads a cell as GRDB's `String` and `Int64` would: text from TEXT
/// or BLOB, an integer from INTEGER or a REAL within range, nil for anything else.
public struct SQLiteColumns: ColumnReader {
    let statement: SQLiteStatement
    /// The next column's index.
    private(set) var index: Int32 = 0

    init(_ statement: SQLiteStatement) { self.statement = statement }

    public mutating func text() -> String? {
        defer { index += 1 }
        switch sqlite3_column_type(statement, index) {
        case SQLITE_TEXT:
            guard let bytes = sqlite3_column_text(statement, index) else { return nil }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, index))), as: UTF8.self)
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return count == 0 ? "" : nil }
            return String(validating: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self)
        default: return nil
        }
    }

    public mutating func text(equals text: String) -> Bool {
        defer { index += 1 }
        let type = sqlite3_column_type(statement, index)
        guard type == SQLITE_TEXT || type == SQLITE_BLOB else { return false }
        let bytes = type == SQLITE_TEXT ? UnsafeRawPointer(sqlite3_column_text(statement, index)) : sqlite3_column_blob(statement, index)
        let count = Int(sqlite3_column_bytes(statement, index))
        var text = text
        return text.withUTF8 { utf8 in utf8.count == count && (count == 0 || bytes.map { memcmp($0, utf8.baseAddress!, count) == 0 } ?? false) }
    }

    public mutating func integer() -> Int64? {
        defer { index += 1 }
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return sqlite3_column_int64(statement, index)
        case SQLITE_FLOAT:
            let double = sqlite3_column_double(statement, index)
            return double >= Double(Int64.min) && double < Double(Int64.max) ? Int64(double) : nil
        default: return nil
        }
    }
}
