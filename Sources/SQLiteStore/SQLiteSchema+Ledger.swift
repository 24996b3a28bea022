import GRDB

extension SQLiteSchema {
    /// v18, the transaction ledger, v19, recoveries in it, v20, its index for MRR's movement, and
    /// v21, the report's notification lag on the audit row: apart from the earlier migrations,
    /// which are never edited.
    static func registerLedger(_ migrator: inout DatabaseMigrator) {
        // One row per Apple transaction id (the ledger, `LedgerColumn`), written with the row it
        // belongs to. No foreign key to `subscriptions`: a deleted row's revenue stays counted.
        // Rows in the order they were first written (the rowid), Apple's id a unique index: ids
        // arrive in no order, and as the table's key each insert dirtied a page of its own (the
        // poll's system time rose by two thirds); as an index key it dirties a small entry.
        // Indexed by the owning row (and refunds), whose ids a batch writes in order, not by chain,
        // whose ids come in none: a row's first answer inserts here, and every index costs the poll.
        migrator.registerMigration("v18: the transaction ledger") { db in
            try db.execute(sql: """
                CREATE TABLE subscription_transactions (
                    transaction_id TEXT NOT NULL UNIQUE,
                    original_transaction_id TEXT NOT NULL,
                    subscription_id INTEGER,
                    product_id TEXT,
                    environment TEXT,
                    purchased_at INTEGER,
                    expires_at INTEGER,
                    revoked_at INTEGER,
                    revocation_reason INTEGER,
                    revocation_type TEXT,
                    revocation_percentage INTEGER,
                    is_upgraded INTEGER NOT NULL DEFAULT 0 CHECK (is_upgraded IN (0, 1)),
                    price INTEGER,
                    currency TEXT,
                    storefront TEXT,
                    storefront_id TEXT,
                    transaction_reason TEXT,
                    offer_type INTEGER,
                    offer_identifier TEXT,
                    offer_discount_type TEXT,
                    offer_period TEXT,
                    in_app_ownership_type TEXT,
                    web_order_line_item_id TEXT,
                    billing_plan_type TEXT,
                    signed_at INTEGER,
                    as_of INTEGER NOT NULL,
                    first_source TEXT NOT NULL,
                    first_seen_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                )
                """)
            try db.execute(sql: "CREATE INDEX subscription_transactions_subscription ON subscription_transactions(subscription_id, purchased_at)")
            try db.execute(sql: "CREATE INDEX subscription_transactions_revoked ON subscription_transactions(revoked_at) WHERE revoked_at IS NOT NULL")
        }
        // Which transaction a row recovered from billing retry with: the report sums the money
        // recovered in its one pass over the ledger (joining each recovery of the trail to its
        // transaction cost the report at 10 M events a third more).
        migrator.registerMigration(recoveriesMigration) { db in
            try db.execute(sql: "ALTER TABLE subscription_transactions ADD COLUMN billing_recovery INTEGER")
        }
        // MRR's movement reads each page of subscriptions' paid periods in this index's order: with
        // every column it reads in the index, SQLite reads the index alone, not a row of the table
        // per period scattered over the nights that wrote them (at 1,000,000 transactions 0.32 s
        // against 1.2 s). It replaces v18's index, which it begins with.
        migrator.registerMigration(periodsMigration) { db in
            try db.execute(sql: "DROP INDEX subscription_transactions_subscription")
            try db.execute(sql: """
                CREATE INDEX subscription_transactions_subscription ON subscription_transactions(
                    subscription_id, purchased_at, expires_at, price, currency, revoked_at, is_upgraded, in_app_ownership_type, environment)
                """)
        }
        // A change a notification brought keeps when Apple's data in it was true: the report's
        // notification lag read it through the notification's key, a random look-up per change.
        migrator.registerMigration(notifiedAtMigration) { db in
            try db.execute(sql: "ALTER TABLE subscription_events ADD COLUMN apple_state_at INTEGER")
        }
        // The audit row keeps the columns the report reads beside its JSON
        // (`SubscriptionEventsSQL.reportColumns`), so the report reads no JSON of the rows written since.
        migrator.registerMigration(reportColumnsMigration) { db in
            try db.execute(sql: """
                ALTER TABLE subscription_events ADD COLUMN environment TEXT;
                ALTER TABLE subscription_events ADD COLUMN verified INTEGER;
                ALTER TABLE subscription_events ADD COLUMN expires_at INTEGER;
                ALTER TABLE subscription_events ADD COLUMN grace_period_expires_at INTEGER;
                ALTER TABLE subscription_events ADD COLUMN is_in_billing_retry INTEGER;
                ALTER TABLE subscription_events ADD COLUMN auto_renew_status INTEGER;
                ALTER TABLE subscription_events ADD COLUMN expiration_intent INTEGER;
                ALTER TABLE subscription_events ADD COLUMN cancelled_at INTEGER;
                """)
        }
        // The offers alone, in subscription order, with every column the report's offer conversion
        // reads of them (`RevenueSQL.offers`): its starts are judged in that order from this index
        // (at 10,000,000 transactions 2.3 s; through v20's index and a row of the table each, 6.3 s).
        // Only a transaction with an offer writes it. As PostgreSQL's v21.
        migrator.registerMigration(offersMigration) { db in
            try db.execute(sql: """
                CREATE INDEX subscription_transactions_offers ON subscription_transactions(
                    subscription_id, purchased_at, original_transaction_id, offer_type, offer_identifier, offer_discount_type,
                    in_app_ownership_type, environment)
                WHERE offer_type IS NOT NULL
                """)
        }
    }

    static let recoveriesMigration = "v19: recoveries in the ledger"
    static let notifiedAtMigration = "v21: the notification lag on the audit trail"
    static let periodsMigration = "v20: paid periods in subscription order"
    static let reportColumnsMigration = "v22: the report's columns on the audit trail"
    static let offersMigration = "v23: the ledger's offers in subscription order"
}
