extension PostgresSchema {
    /// v17 and on, in order: apart from the earlier migrations, which are never edited.
    static let ledgerMigrations = [ledger, recoveries, notifiedAt, reportColumns, offers]

    /// v17, the transaction ledger: one row per Apple transaction id (`LedgerColumn`), written with
    /// the row it belongs to. No foreign key to `subscriptions`: a deleted row's revenue stays counted.
    static let ledger = Migration(identifier: "v17: the transaction ledger", statements: [
        """
        CREATE TABLE subscription_transactions (
            transaction_id TEXT PRIMARY KEY,
            original_transaction_id TEXT NOT NULL,
            subscription_id BIGINT,
            product_id TEXT,
            environment TEXT,
            purchased_at BIGINT,
            expires_at BIGINT,
            revoked_at BIGINT,
            revocation_reason BIGINT,
            revocation_type TEXT,
            revocation_percentage BIGINT,
            is_upgraded SMALLINT NOT NULL DEFAULT 0 CHECK (is_upgraded IN (0, 1)),
            price BIGINT,
            currency TEXT,
            storefront TEXT,
            storefront_id TEXT,
            transaction_reason TEXT,
            offer_type BIGINT,
            offer_identifier TEXT,
            offer_discount_type TEXT,
            offer_period TEXT,
            in_app_ownership_type TEXT,
            web_order_line_item_id TEXT,
            billing_plan_type TEXT,
            signed_at BIGINT,
            as_of BIGINT NOT NULL,
            first_source TEXT NOT NULL,
            first_seen_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL
        )
        """,
        "CREATE INDEX subscription_transactions_subscription ON subscription_transactions(subscription_id, purchased_at)",
        "CREATE INDEX subscription_transactions_revoked ON subscription_transactions(revoked_at) WHERE revoked_at IS NOT NULL",
    ])

    /// v18: which transaction a row recovered from billing retry with, so the report sums the money
    /// recovered in its one pass over the ledger.
    static let recoveries = Migration(identifier: "v18: recoveries in the ledger", statements: [
        "ALTER TABLE subscription_transactions ADD COLUMN billing_recovery BIGINT",
    ])

    /// v19: a change a notification brought keeps when Apple's data in it was true, so that the
    /// report's notification lag needs no look-up of the notification per change.
    static let notifiedAt = Migration(identifier: "v19: the notification lag on the audit trail", statements: [
        "ALTER TABLE subscription_events ADD COLUMN apple_state_at BIGINT",
    ])

    /// v20: the audit row keeps the columns the report reads beside its JSON
    /// (``SubscriptionEventsSQL/reportColumns``), so the report reads no JSON of the rows written since.
    static let reportColumns = Migration(identifier: "v20: the report's columns on the audit trail", statements: [
        """
        ALTER TABLE subscription_events ADD COLUMN environment TEXT, ADD COLUMN verified SMALLINT, ADD COLUMN expires_at BIGINT,
            ADD COLUMN grace_period_expires_at BIGINT, ADD COLUMN is_in_billing_retry SMALLINT, ADD COLUMN auto_renew_status SMALLINT,
            ADD COLUMN expiration_intent INTEGER, ADD COLUMN cancelled_at BIGINT
        """,
    ])

    /// v21: the offers alone, in subscription order, with every column the report's offer
    /// conversion reads of them (`RevenueSQL.offers`): it finds each chain's first transaction of
    /// an offer by reading this index twice in step (at 10,000,000 transactions, 0.8 s), not the
    /// whole ledger twice into a hash join (5.7 s). Only a transaction with an offer writes it. As
    /// SQLite's v23.
    static let offers = Migration(identifier: "v21: the ledger's offers in subscription order", statements: [
        """
        CREATE INDEX subscription_transactions_offers ON subscription_transactions(subscription_id, purchased_at)
            INCLUDE (original_transaction_id, offer_type, offer_identifier, offer_discount_type, in_app_ownership_type, environment)
            WHERE offer_type IS NOT NULL
        """,
    ])
}
