/// The report's revenue, refund, offer and MRR figures, summed by the database over the ledger
/// (`subscription_transactions`) so that the report holds totals, never the ledger. Both dialects
/// run the same text but for how the paid periods come back and how the offers' subquery is
/// fenced (``SQLDialect/fence``). Every figure is per currency: amounts are never summed across currencies.
/// Family Sharing members' transactions are left out (the purchaser's transaction is the one
/// paid for), and so is a Family Sharing revocation (no money back) and an upgrade's end.
enum RevenueSQL {
    static let day = ReportCalendar.dayMs

    /// What both readings leave out, and the environment asked for (nil: both).
    private static func counted(_ t: String, environment: String?) -> SQLStatement {
        let family: SQLStatement = "coalesce(\(unescaped: t).in_app_ownership_type, '') <> 'FAMILY_SHARED'"
        guard let environment else { return family }
        return "\(family) AND \(unescaped: t).environment = \(environment)"
    }

    /// A transaction's price spread over a month by its period, read from its own dates (a week,
    /// one, two, three or six months, a year).
    private static let monthly = """
        CASE WHEN (t.expires_at - t.purchased_at) < \(10 * day) THEN t.price * 52 / 12 WHEN (t.expires_at - t.purchased_at) < \(45 * day) THEN t.price
            WHEN (t.expires_at - t.purchased_at) < \(75 * day) THEN t.price / 2 WHEN (t.expires_at - t.purchased_at) < \(135 * day) THEN t.price / 3
            WHEN (t.expires_at - t.purchased_at) < \(270 * day) THEN t.price / 6 ELSE t.price / 12 END
        """

    /// A paid period that counts in MRR: not refunded, not upgraded away, not free.
    private static let paying = "t.revoked_at IS NULL AND t.is_upgraded = 0 AND t.price > 0"

    /// Sales by UTC day of purchase, day of expiry and currency, before `toMs`: (purchase day,
    /// expiry day, currency or "", transactions, priced, gross milliunits, paying, monthly
    /// milliunits, recoveries, priced recoveries, recovered milliunits). A transaction without a
    /// price has no currency either: its day's "" line. A recovery is a transaction a row
    /// recovered from billing retry (or its grace period) with (`billing_recovery`), bought the
    /// day Apple recovered it.
    /// "Paying" are the paid periods ``paying``, each price spread over a month by its period
    /// (``monthly``; Sandbox's accelerated periods read wrong, one reason the report leaves Sandbox
    /// out by default): ``RevenueReport`` finds the MRR at any day's end from them. One pass over the
    /// ledger for both, whatever the report's span.
    static func sales(toMs: Int64, environment: String?) -> SQLStatement {
        """
            SELECT t.purchased_at / \(unescaped: String(day)), t.expires_at / \(unescaped: String(day)), coalesce(t.currency, ''), count(*), count(t.price),
                CAST(coalesce(sum(t.price), 0) AS BIGINT), count(CASE WHEN \(unescaped: paying) THEN 1 END),
                CAST(coalesce(sum(CASE WHEN \(unescaped: paying) THEN \(unescaped: monthly) END), 0) AS BIGINT),
                count(t.billing_recovery), count(CASE WHEN t.billing_recovery = 1 THEN t.price END),
                CAST(coalesce(sum(CASE WHEN t.billing_recovery = 1 THEN t.price END), 0) AS BIGINT)
            FROM subscription_transactions t
            WHERE t.purchased_at < \(toMs) AND \(counted("t", environment: environment))
            GROUP BY 1, 2, 3
            """
    }

    /// Refunds by UTC day of revocation and currency, before `toMs`: (day, currency or "", refunds, priced,
    /// refunded milliunits). A prorated refund counts its share (`revocationPercentage` is in
    /// milliunits of a percent: 100000 is all of it).
    static func refunds(toMs: Int64, environment: String?) -> SQLStatement {
        """
        SELECT t.revoked_at / \(unescaped: String(day)), coalesce(t.currency, ''), count(*), count(t.price),
            CAST(coalesce(sum(CASE WHEN t.revocation_type = 'REFUND_PRORATED' AND t.revocation_percentage IS NOT NULL
                THEN t.price * t.revocation_percentage / 100000 ELSE t.price END), 0) AS BIGINT)
        FROM subscription_transactions t
        WHERE t.revoked_at < \(toMs) AND t.is_upgraded = 0
            AND coalesce(t.revocation_type, '') <> 'FAMILY_REVOKE' AND \(counted("t", environment: environment))
        GROUP BY 1, 2 ORDER BY 1, 2
        """
    }

    /// Offer starts before `toMs` by UTC day, offer type and discount type, and how many of them a paid period
    /// followed: (day, offer type, discount or "", starts, converted). A start is a chain's first
    /// transaction of one offer (an introductory offer paid as you go spans several periods); it
    /// converted when a later period of its chain without an offer was bought and not refunded.
    /// The starts, and each one's earlier transactions of its offer, are read from an index of the
    /// offers alone (SQLite v23, PostgreSQL v21; `p.offer_type IS NOT NULL` says what the equality
    /// implies, so that it may), not the whole ledger; each start's later periods are looked up
    /// through the row that owns the chain (the ledger's index) in subscription order
    /// (``SQLDialect/fence``), so that each look-up reads the pages the one before it read. At
    /// 10,000,000 transactions, PostgreSQL's server spent 17.8 s of CPU on this statement as
    /// first written (two passes over the ledger into a hash join, a look-up per start in day
    /// order, each a page from the operating system) and 3.2 s like this; SQLite 6.3 s and 2.3 s.
    static func offers(_ dialect: SQLDialect, toMs: Int64, environment: String?) -> SQLStatement {
        """
        SELECT day, offer_type, discount, count(*), CAST(sum(converted) AS BIGINT) FROM (
            SELECT s.day, s.offer_type, s.discount, CASE WHEN EXISTS (
                SELECT 1 FROM subscription_transactions u
                WHERE u.subscription_id = s.subscription_id AND u.original_transaction_id = s.original_transaction_id
                    AND u.purchased_at > s.purchased_at AND u.offer_type IS NULL AND u.revoked_at IS NULL) THEN 1 ELSE 0 END AS converted
            FROM (
                SELECT t.subscription_id, t.original_transaction_id, t.purchased_at, t.purchased_at / \(unescaped: String(day)) AS day,
                    t.offer_type, coalesce(t.offer_discount_type, '') AS discount
                FROM subscription_transactions t
                WHERE t.offer_type IS NOT NULL AND t.purchased_at < \(toMs) AND \(counted("t", environment: environment))
                    AND NOT EXISTS (
                        SELECT 1 FROM subscription_transactions p
                        WHERE p.subscription_id = t.subscription_id AND p.original_transaction_id = t.original_transaction_id
                            AND p.purchased_at < t.purchased_at AND p.offer_type IS NOT NULL AND p.offer_type = t.offer_type
                            AND coalesce(p.offer_identifier, '') = coalesce(t.offer_identifier, ''))
                ORDER BY t.subscription_id, t.purchased_at \(unescaped: dialect.fence)) AS s
            \(unescaped: dialect.fence)) AS c
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        """
    }

    /// PostgreSQL's settings for the sums' transaction (`SET LOCAL`, so the connection goes back
    /// to the pool as it came): the report already reads five things at once (three trail pages,
    /// MRR's pages, these), so JIT compiling a statement cost more CPU than it saved (2.4 s for
    /// the offers at 1,000,000 transactions, inlining and optimising for a cost estimate of 1.7
    /// million) and a statement's own parallel workers only took cores from the other reads. The
    /// report at 10,000,000 events: 31.4 s with both, 28.1 s without JIT, 25.4 s without either
    /// (REPORT.md, Cost). Set here, not at each connection's start, which a pooler such as PgBouncer
    /// refuses for a parameter it does not know.
    static let sumsPlanSettings: [SQLStatement] = ["SET LOCAL jit = off", "SET LOCAL max_parallel_workers_per_gather = 0"]

    /// The lowest and highest subscription the ledger names: the range ``paidPeriods(_:subscriptions:toMs:environment:)`` pages through.
    static let subscriptionIDs: SQLStatement = "SELECT min(subscription_id), max(subscription_id) FROM subscription_transactions"

    /// The first subscription the ledger names from `id` on (by its index).
    static func firstSubscriptionID(from id: Int64) -> SQLStatement {
        "SELECT min(subscription_id) FROM subscription_transactions WHERE subscription_id >= \(id)"
    }

    /// The paid periods counted in MRR of the subscriptions in `subscriptions`, bought before
    /// `toMs`: (subscription, purchase day, expiry day, monthly milliunits, currency). SQLite
    /// returns a row per period in its index's order (v20's covers every column read), read by
    /// ``PaidPeriod/init(_:)``; PostgreSQL the page as one text in no order (``PackedRows``;
    /// ``MRRMovementFold`` groups a page by subscription). SQLite's building of the text cost
    /// more than its rows.
    static func paidPeriods(_ dialect: SQLDialect, subscriptions: Range<Int64>, toMs: Int64, environment: String?) -> SQLStatement {
        let fields = [
            "t.subscription_id", "t.purchased_at / \(day)", "t.expires_at / \(day)", monthly, "t.currency",
        ]
        let columns: String
        switch dialect {
        case .sqlite: columns = fields.joined(separator: ", ")
        case .postgres: columns = PackedRows.aggregate(fields)
        }
        return """
            SELECT \(unescaped: columns) FROM subscription_transactions t
            WHERE t.subscription_id >= \(subscriptions.lowerBound) AND t.subscription_id < \(subscriptions.upperBound) AND t.purchased_at < \(toMs)
                AND t.expires_at IS NOT NULL AND t.currency IS NOT NULL AND \(unescaped: paying) AND \(counted("t", environment: environment))
            \(unescaped: dialect == .sqlite ? "ORDER BY t.subscription_id" : "")
            """
    }
}
