import PostgresNIO
import StatusPolling

/// Reads a row's cells in order: the store's ``ColumnReader``, with which the library's shared
/// readers (``SubscriptionRowSQL``, …) read its rows.
public struct RowReader {
    private let cells: PostgresRandomAccessRow
    private var index = 0

    init(_ row: PostgresRow) { cells = row.makeRandomAccess() }

    mutating func next<T: PostgresDecodable>(_ type: T.Type = T.self) throws -> T {
        defer { index += 1 }
        return try cells[index].decode(T.self)
    }

    /// The next cell's bytes as the server sent them (a text's UTF-8), nil for NULL.
    mutating func nextBytes() -> ByteBuffer? {
        defer { index += 1 }
        return cells[index].bytes
    }
}
