import StatusPolling

/// The PostgreSQL store reads the rows of the library's shared statements with the same reader
/// as its own: one cursor through a row, whichever reads which columns.
extension RowReader: ColumnReader {
    public mutating func text() throws -> String? { try next() }

    public mutating func integer() throws -> Int64? { try next() }

    public mutating func text(equals text: String) throws -> Bool { try nextBytes()?.readableBytesView.elementsEqual(text.utf8) ?? false }
}
