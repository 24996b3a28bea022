import GRDB
import StatusPolling

/// A GRDB row read left to right as a ``ColumnReader``: how the SQLite store reads the rows of
/// the library's shared statements. Reads the cells in place (a cursor's row is not copied).
public struct SQLiteColumns: ColumnReader {
    let row: Row
    /// The next column's index.
    private(set) var index = 0

    init(_ row: Row) { self.row = row }

    public mutating func text() -> String? {
        defer { index += 1 }
        return row[index]
    }

    public mutating func integer() -> Int64? {
        defer { index += 1 }
        return row[index]
    }
}
