import PostgresNIO
import StatusPolling

extension PostgresQuery {
    /// The library's shared `statement` with PostgreSQL's placeholders, every value bound.
    init(_ statement: SQLStatement) {
        var binds = PostgresBindings(capacity: statement.values.count)
        for value in statement.values {
            switch value {
            case .null: binds.appendNull()
            case .integer(let integer): binds.append(integer)
            case .text(let text): binds.append(text)
            }
        }
        self.init(unsafeSQL: statement.sql(.postgres), binds: binds)
    }
}
