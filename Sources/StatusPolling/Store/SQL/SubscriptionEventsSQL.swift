import Foundation

/// The SQL of the audit trail (`subscription_events`) that both stores run, with the mapping of
/// its rows beside it: a user's history, and the report's pages. Only how the report's columns
/// come out of a row's JSON differs, and each store says it (``trailPage(_:environment:state:records:)``).
public enum SubscriptionEventsSQL {
    /// The audit trail of `userID`'s rows, newest first, read by ``event(_:decoder:)``.
    public static func history(userID: String, limit: Int) -> SQLStatement {
        """
        SELECT id, subscription_id, user_id, run_id, at, reason, apple_status, entitlement_before, entitlement_after,
            old_values, new_values, status_backend, source, notification_id
        FROM subscription_events WHERE user_id = \(userID) ORDER BY id DESC LIMIT \(limit)
        """
    }

    /// A row of ``history(userID:limit:)``, both sides' JSON decoded.
    public static func event(_ row: inout some ColumnReader, decoder: JSONDecoder) throws -> SubscriptionEvent {
        SubscriptionEvent(
            id: try row.column(), subscriptionID: try row.column(), userID: try row.column(), runID: try row.column(), atMs: try row.column(),
            reason: try row.column(), appleStatus: try row.column(), entitlementBefore: try row.column(), entitlementAfter: try row.column(),
            old: try decoder.decode(SubscriptionState.self, from: Data(try row.column(String.self).utf8)),
            new: try decoder.decode(SubscriptionState.self, from: Data(try row.column(String.self).utf8)),
            statusBackend: try row.column(), source: try row.column(), notificationID: try row.column())
    }

    /// The lowest and highest id of the trail, read by ``eventIDs(_:)``.
    public static let eventIDRange: SQLStatement = "SELECT min(id), max(id) FROM subscription_events"

    /// The row of ``eventIDRange``: nil when the trail is empty.
    public static func eventIDs(_ row: inout some ColumnReader) throws -> ClosedRange<Int64>? {
        guard let first: Int64 = try row.column(), let last: Int64 = try row.column() else { return nil }
        return first...last
    }

    /// The trail rows whose ids lie in `ids`, in `id` order, read by ``trailEvent(_:state:)``:
    /// each event's own columns, then the report's columns of its new values (``TrailState``).
    /// A store says how those come out of the JSON: `environment` (the new values', else the
    /// old), `state` (the report's columns), and `records` (joined after the page `e`).
    public static func trailPage(_ ids: Range<Int64>, environment: String, state: String, records: String = "") -> SQLStatement {
        """
        SELECT e.id, e.subscription_id, e.at, e.reason, \(unescaped: environment), e.source,
            CASE WHEN e.notification_id IS NOT NULL
                THEN (SELECT a.apple_state_at FROM app_store_notifications AS a WHERE a.notification_id = e.notification_id) END,
            e.revoked_at, \(unescaped: state)
        FROM (SELECT id, subscription_id, at, reason, source, notification_id, old_values, new_values, revoked_at
              FROM subscription_events WHERE id >= \(ids.lowerBound) AND id < \(ids.upperBound)) AS e\(unescaped: records)
        ORDER BY e.id
        """
    }

    /// A row of ``trailPage(_:environment:state:records:)``; `state` reads the report's columns,
    /// the store's way. Inlinable: the report reads millions of them.
    @inlinable
    public static func trailEvent<Row: ColumnReader>(_ row: inout Row, state: (inout Row) throws -> TrailState) throws -> TrailEvent {
        let id: Int64 = try row.column(), subscriptionID: Int64 = try row.column(), atMs: Int64 = try row.column()
        let reason: String = try row.column(), environment: String? = try row.column(), source: String? = try row.column()
        let notifiedAtMs: Int64? = try row.column(), revokedAtMs: Int64? = try row.column()
        return TrailEvent(
            id: id, subscriptionID: subscriptionID, atMs: atMs, reason: reason, environment: environment, source: source,
            notifiedAtMs: notifiedAtMs, new: try state(&row), revokedAtMs: revokedAtMs)
    }
}
