import PostgresNIO
import StatusPolling

extension PostgresSubscriptionStore {
    /// The trail in `id` order, a page at a time (the report's one pass), its columns read out of
    /// the JSON by PostgreSQL, in ``RowReader/trailState()``'s order: no decoder per row. Only
    /// `new_values` is parsed (the report keeps each row's columns itself), once, by
    /// `json_to_record` (a `jsonb` cast and `->>` per column cost the server four times as much).
    public func trailEvents(in ids: Range<Int64>) async throws -> [TrailEvent] {
        let page = SubscriptionEventsSQL.trailPage(
            ids, environment: "coalesce(n.environment, e.old_values::json->>'environment')", state: Self.trailColumns("n"),
            records: ", json_to_record(e.new_values::json) AS n(\(Self.trailRecord))")
        return try await read { connection, logger in
            try await connection.rows(page, logger: logger) { reader in
                try SubscriptionEventsSQL.trailEvent(&reader) { reader in try reader.trailState() }
            }
        }
    }

    /// The contract columns the report reads, typed, as `json_to_record` takes them out of a trail row's JSON.
    static let trailRecord = """
        original_transaction_id text, environment text, expires_at bigint, grace_period_expires_at bigint, \
        is_in_billing_retry boolean, auto_renew_status boolean, expiration_intent integer, cancelled_at bigint
        """

    /// The report's columns (``TrailState``) of the record `r`, for ``RowReader/trailState()``: the
    /// identifiers only as "is there one".
    static func trailColumns(_ r: String) -> String {
        """
        \(r).original_transaction_id IS NOT NULL, \(r).expires_at, \(r).grace_period_expires_at, coalesce(\(r).is_in_billing_retry, false), \
        \(r).auto_renew_status, \(r).expiration_intent, \(r).cancelled_at
        """
    }
}
