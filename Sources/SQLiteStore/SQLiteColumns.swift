import GRDB
import StatusPolling

/// A GRDB row read left to right as a ``ColumnReader``: how the SQLite store reads the rows of
/// the library's shared statements. Reads the cells in place (a cursor's row is not copied), each
/// as one `DatabaseValue` (a concrete decode: a generic decode per column instantiated its
/// optional type's metadata for every cell of every row).
public struct SQLiteColumns: ColumnReader {
    let row: Row
    /// The next column's index.
    private(set) var index = 0

    init(_ row: Row) { self.row = row }

    public mutating func text() -> String? {
        let value = next()
        switch value.storage {
        case .string(let text): return text
        case .null: return nil
        default: return String.fromDatabaseValue(value)
        }
    }

    public mutating func integer() -> Int64? {
        let value = next()
        switch value.storage {
        case .int64(let integer): return integer
        case .null: return nil
        default: return Int64.fromDatabaseValue(value)
        }
    }

    private mutating func next() -> DatabaseValue {
        defer { index += 1 }
        return row[index]
    }
}
