import GRDB
import GRDBSQLite
import Testing
@testable import SQLiteStore
@testable import StatusPolling

/// The SQLite store binds and steps the shared statements through SQLite's C API
/// (`Database+SQLStatement.swift`) and reads cells as GRDB's `String` and `Int64` did: each value
/// kind round-trips exactly, an empty text stays an empty text (not NULL), and a statement left in
/// GRDB's cache is reset with nothing bound.
@Suite struct SQLiteStatementTests {
    static func withTable<T>(_ body: (Database) throws -> T) throws -> T {
        let queue = try DatabaseQueue()
        return try queue.write { db in
            try db.execute(sql: "CREATE TABLE cells (id INTEGER PRIMARY KEY, t TEXT, b BLOB, i INTEGER, r REAL)")
            return try body(db)
        }
    }

    @Test func eachValueKindRoundTripsAndAnEmptyTextIsNotNull() throws {
        let receipt = String(repeating: "MIIT", count: 800)
        let rows = try Self.withTable { db -> [[String?]] in
            let insert = "INSERT INTO cells (id, t, i) VALUES (?, ?, ?)"
            for (id, text, integer) in [(1, SQLValue.text(""), SQLValue.integer(0)), (2, .null, .null), (3, .text(receipt), .integer(Int64.max)),
                (4, .text("é€😀"), .integer(-1))] as [(Int64, SQLValue, SQLValue)]
            {
                try db.execute(shared: SQLStatement(sqlite: insert, [.integer(id), text, integer]))
            }
            return try db.fetchAll(shared: SQLStatement(sqlite: "SELECT t, i, t IS NULL FROM cells ORDER BY id", [])) { row in
                [try row.text(), try row.integer().map(String.init), try row.integer().map(String.init)]
            }
        }
        #expect(rows == [["", "0", "0"], [nil, nil, "1"], [receipt, "\(Int64.max)", "0"], ["é€😀", "-1", "0"]])
    }

    @Test func cellsReadAsGRDBReadThem() throws {
        let read = try Self.withTable { db -> [String] in
            try db.execute(sql: "INSERT INTO cells (id, t, b, i, r) VALUES (1, '12', x'6162', 7, 2.9), (2, NULL, x'', NULL, 1e300), (3, 'x', x'ff', 1, NULL)")
            return try db.fetchAll(shared: SQLStatement(sqlite: "SELECT t, b, i, r, i, t, b FROM cells ORDER BY id", [])) { row in
                // Text of a TEXT or BLOB (valid UTF-8) cell; an integer of an INTEGER or a REAL in range.
                let cells: [String?] = [try row.text(), try row.text(), try row.text(), try row.integer().map(String.init), try row.integer().map(String.init)]
                let equal = [try row.text(equals: "12"), try row.text(equals: "ab")]
                return cells.map { $0 ?? "nil" }.joined(separator: ",") + ";" + equal.map(String.init).joined(separator: ",")
            }
        }
        #expect(read == ["12,ab,nil,2,7;true,true", "nil,,nil,nil,nil;false,false", "x,nil,nil,nil,1;false,false"])
    }

    @Test func aCachedStatementIsLeftResetWithNothingBound() throws {
        try Self.withTable { db in
            let statement = SQLStatement(sqlite: "INSERT INTO cells (id, t) VALUES (?, ?) RETURNING id", [.integer(1), .text("receipt")])
            #expect(try db.fetchAll(shared: statement) { try $0.integer() } == [1])
            let cached = try db.cachedStatement(sql: statement.sql(.sqlite))
            #expect(sqlite3_stmt_busy(cached.sqliteStatement) == 0)
            #expect(sqlite3_bind_parameter_count(cached.sqliteStatement) == 2)
            #expect(sqlite3_sql(cached.sqliteStatement).map { String(cString: $0) } == statement.sql(.sqlite))
            #expect(sqlite3_expanded_sql(cached.sqliteStatement).map { pointer in
                defer { sqlite3_free(pointer) }
                return String(cString: pointer)
            } == "INSERT INTO cells (id, t) VALUES (NULL, NULL) RETURNING id")
            // A wrong number of values is refused before anything runs.
            #expect(throws: DatabaseError.self) { try db.execute(shared: SQLStatement(sqlite: "INSERT INTO cells (id) VALUES (?)", [])) }
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM cells") == 1)
        }
    }
}
