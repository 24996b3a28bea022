import PostgresNIO
import StatusPolling

/// Reads a row's cells in order: the store's ``ColumnReader``, with which the library's shared
/// readers (``SubscriptionRowSQL``, …) read its rows. It walks the row's cells as they lie in the
/// message: `PostgresRandomAccessRow` copies every row's cells into an array first.
public struct RowReader {
    private var cells: PostgresRow.Iterator

    init(_ row: PostgresRow) { cells = row.makeIterator() }

    mutating func next<T: PostgresDecodable>(_ type: T.Type = T.self) throws -> T {
        try cell().decode(T.self)
    }

    /// The next cell's bytes as the server sent them (a text's UTF-8), nil for NULL.
    mutating func nextBytes() -> ByteBuffer? { cell().bytes }

    private mutating func cell() -> PostgresCell {
        guard let cell = cells.next() else { preconditionFailure("a statement's reader read more columns than it selects") }
        return cell
    }
}
