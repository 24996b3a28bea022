/// Retention on any ``SQLStore``: a batch's keys (and rows as JSON) read, archived, and deleted
/// in one transaction, so a row is never deleted before its archive holds it.
extension TrailRetention where Self: SQLStore {
    public func prune(
        _ table: RetainedTable, olderThan cutoffMs: Int64, limit: Int, archive: (@Sendable ([String]) async throws -> Void)?
    ) async throws -> Int {
        let dialect = self.dialect, integerKey = RetentionSQL.key(table).isInteger
        let columns: [String]? = archive == nil ? nil
            : dialect == .sqlite ? try await rows(RetentionSQL.columns(table)) { row -> String in try row.column() } : []
        let archived = columns != nil
        let batch = RetentionSQL.batch(table, dialect, olderThan: cutoffMs, limit: limit, columns: columns)
        return try await transaction { session in
            let rows = try await session.rows(batch) { row -> (key: SQLValue, json: String?) in
                let key = integerKey ? SQLValue(try row.column(Int64.self) as Int64) : SQLValue(try row.column(String.self) as String)
                return (key, archived ? try row.column(String.self) as String : nil)
            }
            guard !rows.isEmpty else { return 0 }
            if let archive { try await archive(rows.compactMap(\.json)) }
            try await session.execute(RetentionSQL.delete(table, keys: rows.map(\.key)))
            return rows.count
        }
    }
}
