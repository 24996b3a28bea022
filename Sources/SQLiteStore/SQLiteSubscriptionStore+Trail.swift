import GRDB
import StatusPolling

extension SQLiteSubscriptionStore {
    /// The trail in `id` order, a page at a time (the report's one pass), its columns read out of
    /// the JSON by SQLite (`StateColumns.trailFromJSON`), each row straight from the cursor.
    public func trailEvents(in ids: Range<Int64>) async throws -> [TrailEvent] {
        let page = SubscriptionEventsSQL.trailPage(
            ids, environment: "coalesce(json_extract(e.new_values, '$.environment'), json_extract(e.old_values, '$.environment'))",
            state: StateColumns.trailFromJSON("e.new_values"))
        return try await pool.read { db in
            try db.fetchAll(shared: page) { columns in
                try SubscriptionEventsSQL.trailEvent(&columns) { state in StateColumns.trailState(state.row, from: state.index) }
            }
        }
    }
}
