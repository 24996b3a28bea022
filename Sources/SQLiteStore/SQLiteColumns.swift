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
        guard let (bytes, isText) = nextBytes() else { return nil }
        // A BLOB only if it is UTF-8, as GRDB's `String(data:encoding:)` read it.
        return isText ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
    }

    public mutating func text(equals text: String) -> Bool {
        guard let (bytes, _) = nextBytes() else { return false }
        var text = text
        return text.withUTF8 { utf8 in utf8.count == bytes.count && (bytes.isEmpty || memcmp(bytes.baseAddress!, utf8.baseAddress!, bytes.count) == 0) }
    }

    /// The next cell's bytes where SQLite holds them (until the next step), if it is TEXT or BLOB,
    /// and whether it is TEXT.
    private mutating func nextBytes() -> (bytes: UnsafeRawBufferPointer, isText: Bool)? {
        defer { index += 1 }
        let type = sqlite3_column_type(statement, index)
        guard type == SQLITE_TEXT || type == SQLITE_BLOB else { return nil }
        // The pointer before the count, as SQLite documents; an empty BLOB has no pointer.
        let start = type == SQLITE_TEXT ? UnsafeRawPointer(sqlite3_column_text(statement, index)) : sqlite3_column_blob(statement, index)
        let count = Int(sqlite3_column_bytes(statement, index))
        guard start != nil || count == 0 else { return nil }
        return (UnsafeRawBufferPointer(start: start, count: count), type == SQLITE_TEXT)
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
