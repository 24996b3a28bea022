/// The SQL that selects the rows a run covers, each with whether its Apple data is fresh (then
/// the run skips it), read by ``due(_:)``. The nightly selection is a union of index-backed terms,
/// one per window, so that finding the due rows reads index entries of due rows only
/// (`SelectionWindows.Bounds.selects` and `isFresh` state the same rule in Swift, row by row). An
/// uploaded receipt makes every row of its user due: a receipt lists all of the user's chains, and
/// a sibling row's chain (another group, enrolled as `discovered`) may have changed with it. The
/// two dialects' planners need different help, so each has its own text; the plan tests hold them.
public enum DueSelectionSQL {
    /// The ids of `selection`, in `id` order, each with 0/1 for fresh. `shared`: a backfill's
    /// targets are its work's, leased by the workers that share it (``SQLStore/workShare``).
    public static func select(_ dialect: SQLDialect, _ selection: RowSelection, nowMs: Int64, after cursor: Int64, shared: Bool) -> SQLStatement {
        switch (selection, dialect) {
        case (.nightly(let windows), .sqlite):
            return nightlySQLite(windows.bounds(nowMs: nowMs))
        case (.nightly(let windows), .postgres):
            return "SELECT id, fresh FROM (\(unescaped: nightlyPostgres(windows, nowMs: nowMs))) AS due WHERE id > \(cursor) ORDER BY id"
        case (.backfill(let runID), _) where shared:
            return """
                SELECT t.subscription_id, 0 FROM work_targets t JOIN poll_runs r ON t.work_id = r.work_id
                WHERE r.id = \(runID) AND NOT t.done AND t.subscription_id > \(cursor) ORDER BY t.subscription_id
                """
        case (.backfill(let runID), _):
            return "SELECT subscription_id, 0 FROM backfill_targets WHERE run_id = \(runID) AND subscription_id > \(cursor) ORDER BY subscription_id"
        }
    }

    /// SQLite's nightly selection. `INDEXED BY` pins each term to its index: left alone, the
    /// planner prefers walking the table in `id` order for the union's merge. No `id > cursor`
    /// term either, for the same reason: nightly runs start at 0 (``due(_:after:)`` applies a
    /// cursor). Each row's freshness comes from its entry in `subscriptions_fresh`, which holds
    /// every column `isFresh` reads.
    static func nightlySQLite(_ b: SelectionWindows.Bounds) -> SQLStatement {
        let fresh = b.canBeFresh ? b.freshSQL(row: "f") : "0"
        let freshRows = b.canBeFresh ? "JOIN subscriptions AS f INDEXED BY subscriptions_fresh ON f.id = due.id" : ""
        var lapsed = ""
        if let ranges = b.lapsed?.expiryRanges, !ranges.isEmpty {
            // Tonight's expiry ranges, each a search of the `expires_at` index (which holds
            // `is_in_billing_retry` too, so no table row is read).
            lapsed = """

                UNION SELECT s.id FROM (VALUES \(ranges.map { "(\($0.lowerBound), \($0.upperBound))" }.joined(separator: ", "))) AS turn
                    JOIN subscriptions AS s INDEXED BY subscriptions_expires_at ON s.expires_at BETWEEN turn.column1 AND turn.column2
                    WHERE s.is_in_billing_retry = 0
                """
        }
        return """
            SELECT due.id, \(unescaped: fresh) FROM (
                SELECT id FROM subscriptions INDEXED BY subscriptions_unverified
                    WHERE original_transaction_id IS NULL
                UNION SELECT id FROM subscriptions INDEXED BY subscriptions_user_id
                    WHERE user_id IN (SELECT user_id FROM subscriptions INDEXED BY subscriptions_uploaded_user WHERE receipt_uploaded = 1)
                UNION SELECT id FROM subscriptions INDEXED BY subscriptions_expires_at
                    WHERE expires_at BETWEEN \(b.nearExpiryFrom) AND \(b.nearExpiryTo)
                UNION SELECT id FROM subscriptions INDEXED BY subscriptions_billing_retry
                    WHERE is_in_billing_retry = 1 AND expires_at >= \(b.billingRetryExpiredSince)
                UNION SELECT id FROM subscriptions INDEXED BY subscriptions_grace_period_expires_at
                    WHERE grace_period_expires_at >= \(b.graceEndedSince)\(unescaped: lapsed)
                ORDER BY id) AS due
            \(unescaped: freshRows)
            ORDER BY due.id
            """
    }

    /// PostgreSQL's nightly selection, its bounds as literals (the planner sees them): each row's
    /// freshness from the row itself, found by its primary key (a join would let the planner scan
    /// the table; the receipt is TOASTed apart, never read).
    public static func nightlyPostgres(_ windows: SelectionWindows, nowMs: Int64) -> String {
        let b = windows.bounds(nowMs: nowMs)
        var lapsed = ""
        if let ranges = b.lapsed?.expiryRanges, !ranges.isEmpty {
            // Tonight's expiry ranges, each a search of the `expires_at` index (which holds `is_in_billing_retry` too).
            lapsed = """

                UNION SELECT s.id FROM (VALUES \(ranges.map { "(\($0.lowerBound)::bigint, \($0.upperBound)::bigint)" }.joined(separator: ", "))) AS turn(expires_from, expires_through)
                    JOIN subscriptions AS s ON s.expires_at BETWEEN turn.expires_from AND turn.expires_through
                    WHERE s.is_in_billing_retry = 0
                """
        }
        let selected = """
            SELECT id FROM subscriptions WHERE original_transaction_id IS NULL
            UNION SELECT id FROM subscriptions WHERE user_id IN (SELECT user_id FROM subscriptions WHERE receipt_uploaded = 1)
            UNION SELECT id FROM subscriptions WHERE expires_at BETWEEN \(b.nearExpiryFrom) AND \(b.nearExpiryTo)
            UNION SELECT id FROM subscriptions WHERE is_in_billing_retry = 1 AND expires_at >= \(b.billingRetryExpiredSince)
            UNION SELECT id FROM subscriptions WHERE grace_period_expires_at >= \(b.graceEndedSince)\(lapsed)
            """
        guard b.canBeFresh else { return "SELECT id, 0 AS fresh FROM (\(selected)) AS selected" }
        return """
            SELECT selected.id, (SELECT \(b.freshSQL(row: "f")) FROM subscriptions AS f WHERE f.id = selected.id) AS fresh
            FROM (\(selected)) AS selected
            """
    }

    /// The rows of ``select(_:_:nowMs:after:shared:)``, those up to `cursor` left out.
    public static func due(_ rows: [(id: Int64, fresh: Bool)], after cursor: Int64) -> DueSelection {
        var due = DueSelection()
        for row in rows where row.id > cursor {
            if row.fresh { due.skippedFresh += 1 } else { due.ids.append(row.id) }
        }
        return due
    }
}
