import GRDB
import GRDBSQLite
import StatusPolling

/// Runs the library's shared statements (``SQLStatement``) with SQLite's placeholders: GRDB
/// compiles and caches them, SQLite's C API binds and steps them (GRDB documents both pointers for
/// that). The profile said so: GRDB's `StatementArguments` (an existential per value) and its row
/// cursor (a `Row` and its column names per statement run) were 150 of a poll's 325 allocations
/// per receipt; the writer's share of the poll's CPU went from 18 % to 9 % (perf, c = 256). The
/// store uses no GRDB observation that this would bypass.
extension Database {
    /// Executes `statement`, compiled once per connection: for those a receiver runs per notification.
    func execute(shared statement: SQLStatement) throws {
        try run(statement, cached: true) { _ in }
    }

    /// Every row of `statement`, each read by `read` in place. A text made once
    /// (``SQLStatement/isFixedText``: a writer's per-row insert) is compiled once per connection.
    func fetchAll<T>(shared statement: SQLStatement, _ read: (inout SQLiteColumns) throws -> T) throws -> [T] {
        var rows: [T] = []
        try run(statement, cached: statement.isFixedText) { columns in rows.append(try read(&columns)) }
        return rows
    }

    /// Binds `statement`'s values, steps it to its end with `row` for each result row, and leaves
    /// it reset with nothing bound (a cached statement is GRDB's again, and holds no receipt).
    private func run(_ statement: SQLStatement, cached: Bool, _ row: (inout SQLiteColumns) throws -> Void) throws {
        let sql = statement.sql(.sqlite)
        let compiled = cached ? try cachedStatement(sql: sql) : try makeStatement(sql: sql)
        let handle = compiled.sqliteStatement
        sqlite3_reset(handle)
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        guard statement.values.count == Int(sqlite3_bind_parameter_count(handle)) else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(statement.values.count) values for \(sqlite3_bind_parameter_count(handle)) placeholders", sql: sql)
        }
        for (offset, value) in statement.values.enumerated() {
            let code = Self.bind(value, at: Int32(offset + 1), to: handle)
            guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: lastErrorMessage, sql: sql) }
        }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW:
                var columns = SQLiteColumns(handle)
                try row(&columns)
            case SQLITE_DONE: return
            case let code: throw DatabaseError(resultCode: ResultCode(rawValue: code), message: lastErrorMessage, sql: sql)
            }
        }
    }

    /// SQLite copies the text (`SQLITE_TRANSIENT`), as GRDB binds it.
    private static func bind(_ value: SQLValue, at index: Int32, to handle: SQLiteStatement) -> Int32 {
        switch value {
        case .null: return sqlite3_bind_null(handle, index)
        case .integer(let integer): return sqlite3_bind_int64(handle, index, integer)
        case .text(var text):
            return text.withUTF8 { utf8 in
                // An empty buffer may have no address, and a NULL pointer binds NULL, not ''.
                guard let start = utf8.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, transient) }
                return sqlite3_bind_text(handle, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), Int32(utf8.count), transient)
            }
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
