/// The report's revenue, refund, offer and MRR figures, summed by the database over the ledger
/// (`subscription_transactions`) so that the report holds totals, never the ledger. Both dialects
/// run the same text. Every figure is per currency: amounts are never summed across currencies.
/// Family Sharing members' transactions are left out (the purchaser's transaction is the one
/// paid for), and so is a Family Sharing revocation (no money back) and an upgrade's end.
enum RevenueSQL {
    static let day: Int64 = 86_400_000

    /// What both readings leave out, and the environment asked for (nil: both).
    private static func counted(_ t: String, environment: String?) -> SQLStatement {
        let family: SQLStatement = "coalesce(\(unescaped: t).in_app_ownership_type, '') <> 'FAMILY_SHARED'"
        guard let environment else { return family }
        return "\(family) AND \(unescaped: t).environment = \(environment)"
    }

    /// Sales by UTC day of purchase and currency: (day, currency or "", transactions, priced, gross
    /// milliunits). A transaction without a price has no currency either: its day's "" line.
    static func sales(fromMs: Int64, toMs: Int64, environment: String?) -> SQLStatement {
        """
        SELECT t.purchased_at / \(unescaped: String(day)), coalesce(t.currency, ''), count(*), count(t.price), CAST(coalesce(sum(t.price), 0) AS BIGINT)
        FROM subscription_transactions t
        WHERE t.purchased_at >= \(fromMs) AND t.purchased_at < \(toMs) AND \(counted("t", environment: environment))
        GROUP BY 1, 2 ORDER BY 1, 2
        """
    }

    /// Refunds by UTC day of revocation and currency: (day, currency or "", refunds, priced,
    /// refunded milliunits). A prorated refund counts its share (`revocationPercentage` is in
    /// milliunits of a percent: 100000 is all of it).
    static func refunds(fromMs: Int64, toMs: Int64, environment: String?) -> SQLStatement {
        """
        SELECT t.revoked_at / \(unescaped: String(day)), coalesce(t.currency, ''), count(*), count(t.price),
            CAST(coalesce(sum(CASE WHEN t.revocation_type = 'REFUND_PRORATED' AND t.revocation_percentage IS NOT NULL
                THEN t.price * t.revocation_percentage / 100000 ELSE t.price END), 0) AS BIGINT)
        FROM subscription_transactions t
        WHERE t.revoked_at >= \(fromMs) AND t.revoked_at < \(toMs) AND t.is_upgraded = 0
            AND coalesce(t.revocation_type, '') <> 'FAMILY_REVOKE' AND \(counted("t", environment: environment))
        GROUP BY 1, 2 ORDER BY 1, 2
        """
    }

    /// Offer starts by UTC day, offer type and discount type, and how many of them a paid period
    /// followed: (day, offer type, discount or "", starts, converted). A start is a chain's first
    /// transaction of one offer (an introductory offer paid as you go spans several periods); it
    /// converted when a later period of its chain without an offer was bought and not refunded.
    /// (A chain's periods are found through the row that owns it: the ledger's index.)
    static func offers(fromMs: Int64, toMs: Int64, environment: String?) -> SQLStatement {
        """
        SELECT t.purchased_at / \(unescaped: String(day)), t.offer_type, coalesce(t.offer_discount_type, ''), count(*),
            CAST(sum(CASE WHEN EXISTS (
                SELECT 1 FROM subscription_transactions u
                WHERE u.subscription_id = t.subscription_id AND u.original_transaction_id = t.original_transaction_id AND u.purchased_at > t.purchased_at
                    AND u.offer_type IS NULL AND u.revoked_at IS NULL) THEN 1 ELSE 0 END) AS BIGINT)
        FROM subscription_transactions t
        WHERE t.offer_type IS NOT NULL AND t.purchased_at >= \(fromMs) AND t.purchased_at < \(toMs) AND \(counted("t", environment: environment))
            AND NOT EXISTS (
                SELECT 1 FROM subscription_transactions p
                WHERE p.subscription_id = t.subscription_id AND p.original_transaction_id = t.original_transaction_id AND p.purchased_at < t.purchased_at
                    AND p.offer_type = t.offer_type AND coalesce(p.offer_identifier, '') = coalesce(t.offer_identifier, ''))
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        """
    }

    /// Monthly recurring revenue at each of the instants `ends` (month ends), by currency: one row
    /// per currency, then for each instant the paying subscriptions and the MRR in milliunits — one
    /// pass over the ledger, however many months. Each paid period running at an instant (bought,
    /// not yet expired, not refunded or upgraded away) counts its price over a month: its period is
    /// read from its own dates (a week, one, two, three or six months, a year; Sandbox's
    /// accelerated periods read wrong, which is one reason the report leaves Sandbox out by default).
    static func monthlyRecurringRevenue(at ends: [Int64], environment: String?) -> SQLStatement {
        let length = "(t.expires_at - t.purchased_at)"
        let monthly = """
            CASE WHEN \(length) < \(10 * day) THEN t.price * 52 / 12 WHEN \(length) < \(45 * day) THEN t.price
                WHEN \(length) < \(75 * day) THEN t.price / 2 WHEN \(length) < \(135 * day) THEN t.price / 3
                WHEN \(length) < \(270 * day) THEN t.price / 6 ELSE t.price / 12 END
            """
        let sums = ends.map { end in
            let running = "t.purchased_at <= \(end) AND t.expires_at > \(end)"
            return "count(CASE WHEN \(running) THEN 1 END), CAST(coalesce(sum(CASE WHEN \(running) THEN \(monthly) END), 0) AS BIGINT)"
        }.joined(separator: ",\n    ")
        return """
            SELECT t.currency, \(unescaped: sums)
            FROM subscription_transactions t
            WHERE t.purchased_at <= \(ends.max() ?? 0) AND t.expires_at > \(ends.min() ?? 0)
                AND t.revoked_at IS NULL AND t.is_upgraded = 0 AND t.price > 0 AND t.currency IS NOT NULL AND \(counted("t", environment: environment))
            GROUP BY 1 ORDER BY 1
            """
    }
}
