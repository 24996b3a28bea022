import GRDB
import StatusPolling

/// Runs the library's shared statements (``SQLStatement``) with SQLite's placeholders.
extension Database {
    /// Executes `statement`, compiled once per connection: for those a receiver runs per notification.
    func execute(shared statement: SQLStatement) throws {
        try cachedStatement(sql: statement.sql(.sqlite)).execute(arguments: StatementArguments(statement))
    }

    /// Every row of `statement`, each read by `read` straight from the cursor. A text made once
    /// (``SQLStatement/isFixedText``: a writer's per-row insert) is compiled once per connection.
    func fetchAll<T>(shared statement: SQLStatement, _ read: (inout SQLiteColumns) throws -> T) throws -> [T] {
        let compiled = statement.isFixedText ? try cachedStatement(sql: statement.sql(.sqlite)) : try makeStatement(sql: statement.sql(.sqlite))
        let rows = try Row.fetchCursor(compiled, arguments: StatementArguments(statement))
        var result: [T] = []
        while let row = try rows.next() {
            var columns = SQLiteColumns(row)
            result.append(try read(&columns))
        }
        return result
    }
}
