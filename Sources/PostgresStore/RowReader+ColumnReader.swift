import StatusPolling

/// The PostgreSQL store reads the rows of the library's shared statements with the same reader
/// as its own: one cursor through a row, whichever reads which columns.
extension RowReader: ColumnReader {
    mutating func text() throws -> String? { try next() }

    mutating func integer() throws -> Int64? { try next() }
}
