/// The SQL of the outbox (`outbound_events`): SQLite's insert beside an audit row, and the JSON
/// row PostgreSQL inserts many of at once.
public enum OutboxSQL {
    /// The outbox's columns, in the order of ``insertSQLite`` and ``recordJSON(_:)``.
    public static let columns = "event_id, type, user_id, subscription_id, audit_event_id, source, apple_at, at, body"

    /// ``columns``, each prefixed by `alias` and a dot.
    public static func columns(of alias: String) -> String {
        columns.split(separator: ", ").map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    /// One outbox row with SQLite's placeholders, bound in the order of ``columns``: the text is
    /// made once, where a shared statement would be rendered again for every changed row of a poll.
    public static let insertSQLite = "INSERT INTO outbound_events (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"

    /// `event` as a JSON object of the columns, for `jsonb_to_recordset` (``recordsetColumns``).
    public static func recordJSON(_ e: OutboundEvent) -> String {
        """
        {"event_id":\(JSONText.quoted(e.eventID)),"type":\(JSONText.quoted(e.kind.rawValue)),"user_id":\(JSONText.quoted(e.userID)),\
        "subscription_id":\(e.subscriptionID),"audit_event_id":\(e.auditEventID),"source":\(JSONText.quoted(e.source)),\
        "apple_at":\(JSONText.number(e.appleAtMs)),"at":\(e.atMs),"body":\(JSONText.quoted(e.body))}
        """
    }

    /// The column definitions of ``recordJSON(_:)`` rows, for PostgreSQL's `jsonb_to_recordset`.
    public static let recordsetColumns =
        "event_id text, type text, user_id text, subscription_id bigint, audit_event_id bigint, source text, apple_at bigint, at bigint, body text"
}
