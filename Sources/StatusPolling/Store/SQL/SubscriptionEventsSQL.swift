import EntitlementCore
import Foundation

/// The SQL of the audit trail (`subscription_events`) that both stores run, with the mapping of
/// its rows beside it: a user's history, and the report's pages. Only how the report's columns
/// come out of a row's JSON differs by dialect (``trailPage(_:_:)``).
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

    /// The contract columns of an audit row's new values that it also keeps as columns of its own
    /// (SQLite v22, PostgreSQL v20), after `environment` (the new values', else the old) and
    /// `verified` (the new values name an original transaction): what the report reads of each
    /// event (``TrailState``). Out of the JSON they cost the database more than the rest of the
    /// report's pass over the trail (SQLite 0.75 s, PostgreSQL ≈ 4 s per 1,000,000 events).
    public static let reportStateColumns: [ContractColumn] = [
        .expiresAt, .gracePeriodExpiresAt, .isInBillingRetry, .autoRenewStatus, .expirationIntent, .cancelledAt,
    ]

    /// The report's columns of an audit row, with their kinds, in ``reportValues(old:new:)``'s order.
    static let reportColumns: [(name: String, kind: ContractValue.Kind)] =
        [("environment", .text), ("verified", .flag)] + reportStateColumns.map { ($0.rawValue, $0.kind) }

    /// The values of ``reportColumns`` for a change from `old` to `new`.
    static func reportValues(old: SubscriptionState, new: SubscriptionState) -> [ContractValue] {
        [.text(new.environment ?? old.environment), .flag(new.originalTransactionID != nil)] + reportStateColumns.map { $0.value(in: new) }
    }

    /// The trail rows whose ids lie in `ids`, read by ``trailEvent(_:)``: each event's own
    /// columns, then its ``TrailState``. SQLite returns them in `id` order; PostgreSQL packs the
    /// page into one text in no order (``PackedRows``). A row written since SQLite v22 /
    /// PostgreSQL v20 is read from its ``reportColumns``; an older one, in the same scan, out of
    /// its JSON by the database (no decoder per row), where only the dialect differs: `environment`, `state`, and
    /// the record PostgreSQL parses `new_values` into once (`json_to_record`; a `jsonb` cast and
    /// `->>` per column cost the server four times as much). A change a notification brought
    /// carries when Apple's data in it was true (`apple_state_at`, since SQLite v21 / PostgreSQL
    /// v19); an older one finds it through its stored notification, a random look-up per change
    /// (SQLite 0.25 s per 1,000,000 events; PostgreSQL 1.1 s per 250,000 look-ups).
    public static func trailPage(_ dialect: SQLDialect, _ ids: Range<Int64>) -> SQLStatement {
        let environment: String, state: [String], record: String
        switch dialect {
        case .sqlite:
            environment = "coalesce(json_extract(e.new_values, '$.environment'), json_extract(e.old_values, '$.environment'))"
            state = [
                "json_extract(e.new_values, '$.original_transaction_id') IS NOT NULL", "json_extract(e.new_values, '$.expires_at')",
                "json_extract(e.new_values, '$.grace_period_expires_at')", "coalesce(json_extract(e.new_values, '$.is_in_billing_retry'), 0)",
                "json_extract(e.new_values, '$.auto_renew_status')", "json_extract(e.new_values, '$.expiration_intent')",
                "json_extract(e.new_values, '$.cancelled_at')",
            ]
            record = ""
        case .postgres:
            environment = "coalesce(n.environment, e.old_values::json->>'environment')"
            state = [
                "(n.original_transaction_id IS NOT NULL)::int", "n.expires_at", "n.grace_period_expires_at",
                "coalesce(n.is_in_billing_retry, false)::int", "n.auto_renew_status::int", "n.expiration_intent", "n.cancelled_at",
            ]
            record = """
                json_to_record(e.new_values::json) AS n(original_transaction_id text, environment text, expires_at bigint, \
                grace_period_expires_at bigint, is_in_billing_retry boolean, auto_renew_status boolean, expiration_intent integer, \
                cancelled_at bigint)
                """
        }
        let kept = ["e.id", "e.subscription_id", "e.at", "e.reason", "e.environment", "e.source", "e.apple_state_at", "e.revoked_at"]
            + reportColumns.dropFirst().map { "e.\($0.name)" }
        let older = [
            "e.id", "e.subscription_id", "e.at", "e.reason", environment, "e.source",
            """
            coalesce(e.apple_state_at, CASE WHEN e.notification_id IS NOT NULL
                THEN (SELECT a.apple_state_at FROM app_store_notifications AS a WHERE a.notification_id = e.notification_id) END)
            """,
            "e.revoked_at",
        ] + state
        // One scan of the page: a second for the older rows cost PostgreSQL a fifth of the page (SQLite took the same time
        // either way over a settled trail of 10,000,000 events: 25.0–26.6 s against 24.9–26.1 s).
        let columns: String
        switch dialect {
        case .sqlite:
            columns = zip(kept, older).map { kept, older in
                kept == older ? kept : "CASE WHEN e.verified IS NULL THEN \(older) ELSE \(kept) END"
            }.joined(separator: ", ")
        case .postgres:
            columns = """
                string_agg(CASE WHEN e.verified IS NOT NULL THEN \(PackedRows.record(kept))
                    ELSE (SELECT \(PackedRows.record(older)) FROM \(record)) END, ';')
                """
        }
        return """
            SELECT \(unescaped: columns) FROM subscription_events AS e WHERE e.id >= \(ids.lowerBound) AND e.id < \(ids.upperBound)
            \(unescaped: dialect == .sqlite ? "ORDER BY e.id" : "")
            """
    }

    /// A row of ``trailPage(_:_:)``. Inlinable: the report reads millions of them.
    @inlinable
    public static func trailEvent(_ row: inout some ColumnReader) throws -> TrailEvent {
        let id: Int64 = try row.column(), subscriptionID: Int64 = try row.column(), atMs: Int64 = try row.column()
        let reason: String = try row.column(), environment: String? = try row.column(), source: String? = try row.column()
        let notifiedAtMs: Int64? = try row.column(), revokedAtMs: Int64? = try row.column()
        return TrailEvent(
            id: id, subscriptionID: subscriptionID, atMs: atMs, reason: reason, environment: environment, source: source,
            notifiedAtMs: notifiedAtMs, new: try trailState(&row), revokedAtMs: revokedAtMs)
    }

    /// The report's columns of a row of ``trailPage(_:_:)``: whether it is verified, then the
    /// columns the entitlement and the billing episodes depend on (flags as 0/1).
    @inlinable
    public static func trailState(_ row: inout some ColumnReader) throws -> TrailState {
        let isVerified: Bool = try row.column(), expiresAt: Int64? = try row.column(), graceExpiresAt: Int64? = try row.column()
        let isInBillingRetry: Bool = try row.column(), autoRenewStatus: Bool? = try row.column(), intent: Int? = try row.column()
        let cancelledAt: Int64? = try row.column()
        return TrailState(
            isVerified: isVerified, expiresAt: expiresAt, gracePeriodExpiresAt: graceExpiresAt, isInBillingRetry: isInBillingRetry,
            autoRenewStatus: autoRenewStatus, expirationIntent: intent, cancelledAt: cancelledAt)
    }
}
