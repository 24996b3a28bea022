/// The SQL of retention (``TrailRetention``): a batch of a table's oldest rows that may go (their
/// keys, and with an archive each row as a JSON object), then their delete. Only how a row
/// becomes JSON differs: PostgreSQL's `row_to_json`, SQLite's `json_object` over the columns
/// `pragma_table_info` names.
enum RetentionSQL {
    /// The key a table's rows are deleted by, and whether it is a number.
    static func key(_ table: RetainedTable) -> (column: String, isInteger: Bool) {
        switch table {
        case .subscriptionEvents, .pollRuns: ("id", true)
        case .appStoreNotifications, .consumptionRequests: ("notification_id", false)
        case .renewalExtensions: ("request_identifier", false)
        }
    }

    /// The column a row's age is read from (ms since 1970).
    private static func age(_ table: RetainedTable) -> String {
        switch table {
        case .subscriptionEvents: "at"
        case .appStoreNotifications: "received_at"
        case .consumptionRequests, .renewalExtensions: "requested_at"
        case .pollRuns: "started_at"
        }
    }

    /// What keeps a row whatever its age.
    private static func kept(_ table: RetainedTable, _ dialect: SQLDialect) -> String {
        switch table {
        case .subscriptionEvents, .appStoreNotifications: return ""
        case .consumptionRequests: return " AND state <> 'pending'"
        // Finished by Apple, or refused by it before it ever accepted.
        case .renewalExtensions: return " AND (completed_at IS NOT NULL OR (accepted_at IS NULL AND apple_error IS NOT NULL))"
        case .pollRuns:
            // The newest run of each mode (the staleness check and the metrics read it), a running or
            // resumable one, and one an audit row still names (the trail's `run_id`).
            let shared = dialect == .postgres ? " AND NOT EXISTS (SELECT 1 FROM poll_runs w WHERE w.work_id = r.id AND w.id <> r.id)" : ""
            return """
                 AND status NOT IN ('running', 'interrupted') AND id NOT IN (SELECT max(id) FROM poll_runs GROUP BY mode) \
                AND NOT EXISTS (SELECT 1 FROM subscription_events e WHERE e.run_id = r.id)\(shared)
                """
        }
    }

    /// The names of `table`'s columns, SQLite's (for ``batch(_:_:olderThan:limit:columns:)``).
    static func columns(_ table: RetainedTable) -> SQLStatement {
        "SELECT name FROM pragma_table_info(\(table.rawValue)) ORDER BY cid"
    }

    /// The keys of the oldest `limit` rows older than `cutoffMs` that nothing keeps, each with its
    /// row as JSON when `columns` is given (SQLite's column names; PostgreSQL needs none, and an
    /// empty list asks for JSON there).
    static func batch(_ table: RetainedTable, _ dialect: SQLDialect, olderThan cutoffMs: Int64, limit: Int, columns: [String]?) -> SQLStatement {
        let key = key(table).column, age = age(table)
        var json = ""
        if let columns {
            json = dialect == .postgres
                ? ", row_to_json(r)::text"
                : ", json_object(" + columns.map { "'\($0)', r.\($0)" }.joined(separator: ", ") + ")"
        }
        return """
            SELECT r.\(unescaped: key)\(unescaped: json) FROM \(unescaped: table.rawValue) AS r
            WHERE r.\(unescaped: age) < \(cutoffMs)\(unescaped: kept(table, dialect))
            ORDER BY r.\(unescaped: age), r.\(unescaped: key) LIMIT \(limit)
            """
    }

    /// Deletes the rows of `keys` (a batch's).
    static func delete(_ table: RetainedTable, keys: [SQLValue]) -> SQLStatement {
        "DELETE FROM \(unescaped: table.rawValue) WHERE \(unescaped: key(table).column) IN (\(joined: keys.map { "\($0)" }))"
    }
}
