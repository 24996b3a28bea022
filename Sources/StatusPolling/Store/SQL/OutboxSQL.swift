import EntitlementCore

/// The SQL of the outbox (`outbound_events`): SQLite's insert beside an audit row, and the JSON
/// rows PostgreSQL inserts many of at once, last in the transaction, and announces.
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

    // MARK: PostgreSQL's outbox, last in its transaction

    /// Writers take one advisory lock first and keep it to their commit, so events get their ids
    /// in the order their transactions commit: a deliverer that has seen event n never finds a
    /// smaller id appear later, and a user's events stay in the order of their changes. Only
    /// transactions that wrote a contract change wait for it, for the few milliseconds between
    /// their insert and their commit. (The key is apart from `migrate`'s and the nights'.)
    static let lock: SQLStatement = "SELECT pg_advisory_xact_lock(\(Int64(0x5354_4154_5553_0003)))"

    /// The channel a listener `LISTEN`s on (docs/EVENTS.md), notified with the new ids, which
    /// PostgreSQL sends when (and only if) the transaction commits.
    public static let channel = "status_poller_events"

    /// PostgreSQL refuses a payload of 8,000 bytes or more: beyond this, the first and last id.
    static let payloadLimit = 7_000

    /// Inserts `rows` (``recordJSON(_:)``, in order); their ids.
    static func insertSet(_ rows: [String]) -> SQLStatement {
        """
        INSERT INTO outbound_events (\(unescaped: columns))
        SELECT \(unescaped: columns(of: "v"))
        FROM jsonb_array_elements(\("[" + rows.joined(separator: ",") + "]")::jsonb) WITH ORDINALITY AS e(row, n),
            jsonb_to_record(e.row) AS v(\(unescaped: recordsetColumns))
        ORDER BY e.n
        RETURNING id
        """
    }

    /// Tells listeners about `ids` at the commit.
    static func notify(_ ids: [Int64]) -> SQLStatement {
        "SELECT pg_notify(\(channel), \(payload(ids)))"
    }

    /// The ids, comma-separated; `first-last` when they would not fit a notification.
    static func payload(_ ids: [Int64]) -> String {
        let list = ids.map(String.init).joined(separator: ",")
        guard list.utf8.count > payloadLimit, let first = ids.first, let last = ids.last else { return list }
        return "\(first)-\(last)"
    }
}
