import Logging
import PostgresNIO
import StatusPolling

/// Adds a transaction's outbound events (`outbound_events`), as its last statements. Writers take
/// one advisory lock first and keep it to their commit, so events get their ids in the order their
/// transactions commit: a deliverer that has seen event n never finds a smaller id appear later,
/// and a user's events stay in the order of their changes. Only transactions that wrote a contract
/// change wait for it, for the few milliseconds between their insert and their commit. Then
/// `NOTIFY` on ``channel`` with the new ids, which PostgreSQL sends when (and only if) the
/// transaction commits.
enum OutboxWrite {
    /// The outbox's advisory lock, apart from `migrate`'s and the nights'.
    static let lockKey: Int64 = 0x5354_4154_5553_0003
    /// The channel a listener `LISTEN`s on (docs/EVENTS.md).
    static let channel = "status_poller_events"
    /// PostgreSQL refuses a payload of 8,000 bytes or more: beyond this, the first and last id.
    static let payloadLimit = 7_000

    /// Inserts `rows` (``OutboxSQL/recordJSON(_:)``, in order) and notifies; their ids.
    @discardableResult
    static func insert(_ rows: [String], connection: PostgresConnection, logger: Logger) async throws -> [Int64] {
        guard !rows.isEmpty else { return [] }
        try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
        let ids = try await connection.query("""
            INSERT INTO outbound_events (\(unescaped: OutboxSQL.columns))
            SELECT \(unescaped: OutboxSQL.columns(of: "v"))
            FROM jsonb_array_elements(\("[" + rows.joined(separator: ",") + "]")::jsonb) WITH ORDINALITY AS e(row, n),
                jsonb_to_record(e.row) AS v(\(unescaped: OutboxSQL.recordsetColumns))
            ORDER BY e.n
            RETURNING id
            """, logger: logger).decode(Int64.self).collect().sorted()
        try await connection.query("SELECT pg_notify(\(channel), \(payload(ids)))", logger: logger)
        return ids
    }

    /// The ids, comma-separated; `first-last` when they would not fit a notification.
    static func payload(_ ids: [Int64]) -> String {
        let list = ids.map(String.init).joined(separator: ",")
        guard list.utf8.count > payloadLimit, let first = ids.first, let last = ids.last else { return list }
        return "\(first)-\(last)"
    }
}
