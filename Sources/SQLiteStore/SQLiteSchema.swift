import GRDB

/// The versioned schema. Each migration is named and never edited once released; add a new one
/// for every change. The web service depends on the contract columns and the `entitlements` view.
enum SQLiteSchema {
    /// Milliseconds since 1970 in SQLite, evaluated when read.
    static let nowMs = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

    /// Every migration this binary knows, oldest first.
    static var identifiers: [String] { migrator.migrations }
    /// The schema this binary needs.
    static var latest: String { identifiers.last ?? "" }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: subscriptions and entitlements") { db in
            try db.execute(sql: """
                CREATE TABLE subscriptions (
                    id INTEGER PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    latest_receipt TEXT NOT NULL,
                    original_transaction_id TEXT UNIQUE,
                    product_id TEXT,
                    environment TEXT,
                    expires_at INTEGER,
                    grace_period_expires_at INTEGER,
                    is_in_billing_retry INTEGER NOT NULL DEFAULT 0 CHECK (is_in_billing_retry IN (0, 1)),
                    auto_renew_status INTEGER CHECK (auto_renew_status IN (0, 1)),
                    auto_renew_product_id TEXT,
                    expiration_intent INTEGER,
                    cancelled_at INTEGER,
                    -- bookkeeping: written by the poller, never read by the web service's entitlement
                    created_at INTEGER NOT NULL DEFAULT (\(nowMs)),
                    last_attempt_at INTEGER,
                    last_verified_at INTEGER,
                    last_apple_status INTEGER,
                    last_error_reason TEXT,
                    last_error TEXT,
                    consecutive_failures INTEGER NOT NULL DEFAULT 0,
                    -- 1 when the web service stored a new receipt since the last verification
                    receipt_uploaded INTEGER NOT NULL DEFAULT 0
                );
                -- A receipt the web service uploads (a resubscription after a lapse, say) makes the
                -- row due even when its expiry is far outside the nightly windows. The poller's own
                -- writes change last_verified_at in the same statement, so they do not set the flag.
                CREATE TRIGGER subscriptions_receipt_uploaded
                AFTER UPDATE OF latest_receipt ON subscriptions
                WHEN NEW.latest_receipt IS NOT OLD.latest_receipt
                    AND NEW.last_verified_at IS OLD.last_verified_at
                BEGIN
                    UPDATE subscriptions SET receipt_uploaded = 1 WHERE id = NEW.id;
                END;
                CREATE INDEX subscriptions_user_id ON subscriptions(user_id);
                CREATE INDEX subscriptions_expires_at ON subscriptions(expires_at);
                CREATE INDEX subscriptions_grace_period_expires_at
                    ON subscriptions(grace_period_expires_at) WHERE grace_period_expires_at IS NOT NULL;
                CREATE VIEW entitlements AS
                SELECT
                    s.id AS subscription_id,
                    s.user_id,
                    s.product_id,
                    s.environment,
                    s.expires_at,
                    s.grace_period_expires_at,
                    s.is_in_billing_retry,
                    s.auto_renew_status,
                    s.cancelled_at,
                    CASE
                        WHEN s.original_transaction_id IS NULL THEN 'unverified'
                        WHEN s.cancelled_at IS NOT NULL THEN 'refunded'
                        WHEN s.expires_at > clock.now_ms THEN 'active'
                        WHEN s.grace_period_expires_at > clock.now_ms THEN 'grace_period'
                        WHEN s.is_in_billing_retry = 1 THEN 'billing_retry'
                        ELSE 'expired'
                    END AS state,
                    CASE
                        WHEN s.cancelled_at IS NULL
                            AND (s.expires_at > clock.now_ms OR s.grace_period_expires_at > clock.now_ms)
                        THEN 1 ELSE 0
                    END AS is_entitled
                FROM subscriptions AS s, (SELECT \(nowMs) AS now_ms) AS clock;
                """)
        }
        migrator.registerMigration("v2: run history, audit trail, backfill targets") { db in
            try db.execute(sql: """
                CREATE TABLE poll_runs (
                    id INTEGER PRIMARY KEY,
                    mode TEXT NOT NULL,                 -- nightly | backfill
                    status TEXT NOT NULL,               -- running | finished | interrupted | aborted
                    started_at INTEGER NOT NULL,        -- wall clock, ms
                    finished_at INTEGER,
                    run_clock INTEGER NOT NULL,         -- the run's --now, ms
                    host TEXT NOT NULL,
                    pid INTEGER NOT NULL,
                    options TEXT NOT NULL,              -- JSON: the settings the run was started with
                    checkpoint_id INTEGER NOT NULL DEFAULT 0, -- every target with id <= this is done
                    targets INTEGER,                    -- rows selected (backfill: fixed at start)
                    selected INTEGER, verified INTEGER, updated INTEGER, unchanged INTEGER, failed INTEGER,
                    retries INTEGER,
                    report TEXT,                        -- JSON: the run report, counts by outcome
                    exit_code INTEGER
                );
                CREATE TABLE subscription_events (
                    id INTEGER PRIMARY KEY,
                    subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    run_id INTEGER REFERENCES poll_runs(id),
                    at INTEGER NOT NULL,                -- the run's clock, ms
                    reason TEXT NOT NULL,
                    apple_status INTEGER,
                    entitlement_before TEXT NOT NULL,   -- state at `at`: active, grace_period, …
                    entitlement_after TEXT NOT NULL,
                    old_values TEXT NOT NULL,           -- JSON of the contract columns
                    new_values TEXT NOT NULL
                );
                CREATE INDEX subscription_events_user ON subscription_events(user_id, id);
                CREATE INDEX subscription_events_subscription ON subscription_events(subscription_id, id);
                -- The rows a backfill covers, fixed when it starts, so --resume finishes that set.
                CREATE TABLE backfill_targets (
                    run_id INTEGER NOT NULL REFERENCES poll_runs(id) ON DELETE CASCADE,
                    subscription_id INTEGER NOT NULL,
                    PRIMARY KEY (run_id, subscription_id)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v3: index-backed nightly selection") { db in
            // One covering index per term of the nightly selection (`expires_at` and the grace
            // period have theirs since v1), so a run reads the index entries of due rows only —
            // never the table, whose rows carry receipts of kilobytes before these columns.
            // Partial indexes stay as small as the rows they serve.
            try db.execute(sql: """
                CREATE INDEX subscriptions_unverified ON subscriptions(original_transaction_id)
                    WHERE original_transaction_id IS NULL;
                CREATE INDEX subscriptions_receipt_uploaded ON subscriptions(receipt_uploaded)
                    WHERE receipt_uploaded = 1;
                CREATE INDEX subscriptions_billing_retry ON subscriptions(expires_at, is_in_billing_retry)
                    WHERE is_in_billing_retry = 1;
                """)
        }
        migrator.registerMigration("v4: the backend that answered") { db in
            // With two App Store backends, a status code means nothing without its backend
            // (verifyReceipt 0, serverAPI 200 or 4040010): both are kept on the row and in the trail.
            try db.execute(sql: """
                ALTER TABLE subscriptions ADD COLUMN last_status_backend TEXT;
                ALTER TABLE subscription_events ADD COLUMN status_backend TEXT;
                """)
        }
        migrator.registerMigration("v5: hear the end of billing retry, and a user's every row on an upload") { db in
            // Before this version a row in billing retry left the selection 60 days past expiry,
            // the night before Apple's final answer, and kept saying billing_retry for good. Every
            // row whose retry Apple has ended by now is marked due once (the flag the selection
            // reads for an uploaded receipt): the next night records how its retry ended. Apple's
            // 60 days (`SelectionWindows.appleBillingRetryPeriod`) are written out: a migration
            // never changes once released.
            try db.execute(sql: """
                UPDATE subscriptions SET receipt_uploaded = 1
                WHERE is_in_billing_retry = 1 AND expires_at < \(nowMs) - 60 * 86400000;
                """)
            // An uploaded receipt makes every row of its user due (a sibling row's chain may have
            // changed with it): the uploaded rows' users, from an index of their own.
            try db.execute(sql: """
                DROP INDEX subscriptions_receipt_uploaded;
                CREATE INDEX subscriptions_uploaded_user ON subscriptions(receipt_uploaded, user_id) WHERE receipt_uploaded = 1;
                """)
        }
        migrator.registerMigration("v6: the lapsed sweep") { db in
            // The lapsed sweep searches `expires_at` for rows not in billing retry: with the flag
            // in the index, it reads index entries only, as the other terms do.
            try db.execute(sql: """
                DROP INDEX subscriptions_expires_at;
                CREATE INDEX subscriptions_expires_at ON subscriptions(expires_at, is_in_billing_retry);
                """)
        }
        migrator.registerMigration("v7: who brought an answer, and the newer answer wins") { db in
            // `apple_state_at`: when the Apple data a row holds was true (a signed payload's
            // signedDate, or when Apple was asked); an older answer no longer overwrites it. The
            // trail says who brought each change (`source`: poll, backfill, notification, and the
            // notification's id); rows written before keep NULL. Reading the trail by time (a
            // report over a period) gets an index.
            try db.execute(sql: """
                ALTER TABLE subscriptions ADD COLUMN apple_state_at INTEGER;
                ALTER TABLE subscription_events ADD COLUMN source TEXT;
                ALTER TABLE subscription_events ADD COLUMN notification_id TEXT;
                CREATE INDEX subscription_events_at ON subscription_events(at);
                """)
        }
        migrator.registerMigration("v8: App Store Server Notifications") { db in
            // Every notification the receiver (or a catch-up) accepted, with what it did, written
            // in the transaction of the row changes it caused: Apple hears 200 only after that
            // commit, and a retry of the same id changes nothing. `app_account_token` (written by
            // the web service: the UUID the app passed at purchase) links a notification to a
            // row before the app uploaded a receipt; an unmatched one keeps its signed payload
            // so a row enrolled later with its token can still adopt it.
            try db.execute(sql: """
                ALTER TABLE subscriptions ADD COLUMN app_account_token TEXT;
                CREATE INDEX subscriptions_app_account_token ON subscriptions(app_account_token) WHERE app_account_token IS NOT NULL;
                CREATE TABLE app_store_notifications (
                    notification_id TEXT PRIMARY KEY,   -- notificationUUID; V1: 'v1:' + SHA-256 of the body
                    version INTEGER NOT NULL,           -- 1 or 2
                    type TEXT NOT NULL,
                    subtype TEXT,
                    signed_at INTEGER,                  -- V2 signedDate, ms
                    apple_state_at INTEGER NOT NULL,    -- when its data was true, ms
                    original_transaction_id TEXT,
                    app_account_token TEXT,
                    environment TEXT,
                    source TEXT NOT NULL,               -- push | history
                    received_at INTEGER NOT NULL,
                    outcome TEXT NOT NULL,              -- applied | unchanged | stale | unmatched | other_environment | conflict | ignored
                    subscription_id INTEGER,            -- the row it concerned
                    signed_payload TEXT                 -- kept while unmatched only
                );
                CREATE INDEX app_store_notifications_received ON app_store_notifications(received_at);
                CREATE INDEX app_store_notifications_subscription ON app_store_notifications(subscription_id, received_at);
                CREATE INDEX app_store_notifications_unmatched ON app_store_notifications(app_account_token) WHERE outcome = 'unmatched';
                """)
        }
        migrator.registerMigration("v9: notification history checkpoints") { db in
            // How far back Apple's notification history has been read, per environment: a
            // catch-up starts there and moves it only after its last page.
            try db.execute(sql: """
                CREATE TABLE notification_history_checkpoints (
                    environment TEXT PRIMARY KEY,       -- Production | Sandbox
                    through_at INTEGER NOT NULL,        -- every notification Apple tried to send before this, ms, was read
                    updated_at INTEGER NOT NULL
                );
                """)
        }
        migrator.registerMigration("v10: rows with fresh Apple data") { db in
            // The nightly selection skips rows whose Apple data is fresh (`--fresh-within`, or
            // recorded since Apple's notification history has been read without a gap): each
            // selected row's freshness is read from this index by id, never from the table row
            // (whose receipt comes first). `covered_from`: where that gapless reading began.
            try db.execute(sql: """
                CREATE INDEX subscriptions_fresh ON subscriptions(id, apple_state_at, expires_at, grace_period_expires_at, receipt_uploaded, environment);
                ALTER TABLE notification_history_checkpoints ADD COLUMN covered_from INTEGER;
                """)
        }
        migrator.registerMigration("v11: the build of each run") { db in
            // `status-poller --version` in one line (version, commit, build date) of the binary
            // that ran each run: a bug report names it. NULL for runs before this version.
            try db.execute(sql: "ALTER TABLE poll_runs ADD COLUMN version TEXT")
        }
        migrator.registerMigration("v12: the chain's transactions, and Apple's status as the check") { db in
            // A subscription is the transactions of its chain: the row keeps which one it holds
            // (`transaction_id`, `purchased_at`, `in_app_ownership_type`; contract columns) and
            // when Apple's data about that transaction was true (`transaction_signed_at`), so a
            // message about another period (a refund of last month) never moves the row back and
            // a newer signing of the same transaction (REFUND, then REFUND_REVERSED) wins. Rows
            // verified before keep NULL until their next answer; nothing is asked again for it.
            // The trail names the transaction of a change that is not the row's own period
            // (`refunded_earlier_period`) and when Apple revoked it. A V2 notification keeps
            // Apple's `status` and whether the row agreed with it once applied. Monthly billing with
            // a 12-month commitment (App Store Server API 1.21): the effective transaction's plan and
            // its place in the commitment, and the plan the next period renews on.
            try db.execute(sql: """
                ALTER TABLE subscriptions ADD COLUMN transaction_id TEXT;
                ALTER TABLE subscriptions ADD COLUMN purchased_at INTEGER;
                ALTER TABLE subscriptions ADD COLUMN in_app_ownership_type TEXT;
                ALTER TABLE subscriptions ADD COLUMN transaction_signed_at INTEGER;
                ALTER TABLE subscriptions ADD COLUMN billing_plan_type TEXT;
                ALTER TABLE subscriptions ADD COLUMN commitment_period INTEGER;
                ALTER TABLE subscriptions ADD COLUMN commitment_periods INTEGER;
                ALTER TABLE subscriptions ADD COLUMN commitment_expires_at INTEGER;
                ALTER TABLE subscriptions ADD COLUMN renewal_billing_plan_type TEXT;
                ALTER TABLE subscription_events ADD COLUMN transaction_id TEXT;
                ALTER TABLE subscription_events ADD COLUMN revoked_at INTEGER;
                ALTER TABLE app_store_notifications ADD COLUMN apple_status INTEGER;
                ALTER TABLE app_store_notifications ADD COLUMN status_agrees INTEGER;
                """)
        }
        migrator.registerMigration("v13: events outbox") { db in
            // The outbound event feed (docs/EVENTS.md): one event per contract change, written in
            // the change's transaction beside its audit row, its body fixed then; `id` is the order
            // of writing. Each endpoint's deliveries are added by the deliverer (`fanned_through`:
            // the last event it added), one row per event and endpoint, in order per user.
            try db.execute(sql: """
                CREATE TABLE outbound_events (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused after a prune: endpoints keep a cursor
                    event_id TEXT NOT NULL UNIQUE,      -- evt_…: the webhook-id
                    type TEXT NOT NULL,                 -- EventKind: renewal, expired, …
                    user_id TEXT NOT NULL,
                    subscription_id INTEGER NOT NULL,
                    audit_event_id INTEGER NOT NULL,    -- subscription_events.id
                    source TEXT NOT NULL,               -- poll, backfill, notification
                    apple_at INTEGER,                   -- when Apple's data was true, ms
                    at INTEGER NOT NULL,                -- when we wrote the change, ms
                    body TEXT NOT NULL                  -- the JSON every delivery sends
                );
                CREATE INDEX outbound_events_at ON outbound_events(at);
                CREATE TABLE event_endpoints (
                    endpoint TEXT PRIMARY KEY,
                    fanned_through INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE event_deliveries (
                    endpoint TEXT NOT NULL,
                    event INTEGER NOT NULL REFERENCES outbound_events(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    state TEXT NOT NULL DEFAULT 'pending', -- pending, delivered, dead
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    last_status INTEGER,
                    last_error TEXT,
                    delivered_at INTEGER,
                    lease_owner TEXT,
                    lease_expires_at INTEGER,
                    PRIMARY KEY (endpoint, event)
                ) WITHOUT ROWID;
                CREATE INDEX event_deliveries_pending ON event_deliveries(endpoint, user_id, event) WHERE state = 'pending';
                -- The deliverer's heads in event order over pending deliveries only: through the
                -- primary key it walked every delivered row first, each batch (52 % of its CPU).
                CREATE INDEX event_deliveries_due ON event_deliveries(endpoint, event) WHERE state = 'pending';
                CREATE INDEX event_deliveries_event ON event_deliveries(event);
                """)
        }
        migrator.registerMigration("v14: renewal extensions") { db in
            // `extend --all`: each request for Extend Subscription Renewal Dates for All Active
            // Subscribers, by Apple's request identifier, recorded before it is sent (a command
            // killed mid-way sends it again, which Apple takes once), whether Apple took or refused
            // it, and Apple's last status (`extend status`, the nightly run) until it is complete.
            try db.execute(sql: """
                CREATE TABLE renewal_extensions (
                    request_identifier TEXT PRIMARY KEY,
                    product_id TEXT NOT NULL,
                    extend_by_days INTEGER NOT NULL,
                    reason_code INTEGER NOT NULL,
                    storefront_country_codes TEXT,
                    environment TEXT NOT NULL,
                    requested_at INTEGER NOT NULL,
                    accepted_at INTEGER,
                    apple_error INTEGER,
                    checked_at INTEGER,
                    completed_at INTEGER,
                    succeeded_count INTEGER,
                    failed_count INTEGER
                )
                """)
        }
        migrator.registerMigration("v15: consumption requests") { db in
            // Apple's CONSUMPTION_REQUESTs for chains a row holds, queued in the notification's own
            // transaction, and the answer sent through Send Consumption Information before the
            // deadline (signedDate + 12 h): its state, attempts, Apple's answer and the body sent.
            // `consumption_consents`: written by the web service — the customer's consent to share
            // consumption data (Apple refuses an answer without it) and when they last used the service.
            try db.execute(sql: """
                CREATE TABLE consumption_requests (
                    notification_id TEXT PRIMARY KEY,   -- the CONSUMPTION_REQUEST's notificationUUID
                    transaction_id TEXT NOT NULL,       -- the transaction Apple asks about
                    original_transaction_id TEXT,
                    subscription_id INTEGER NOT NULL,
                    user_id TEXT NOT NULL,
                    environment TEXT,                   -- Production | Sandbox
                    requested_at INTEGER NOT NULL,      -- signedDate, ms
                    deadline_at INTEGER NOT NULL,       -- requested_at + 12 h
                    period_started_at INTEGER,          -- the asked-about transaction's purchaseDate
                    delivery_status TEXT NOT NULL,      -- DELIVERED | UNDELIVERED_OTHER, as known when it came
                    prior_refunds INTEGER NOT NULL,     -- the customer's refunds in the trail then
                    state TEXT NOT NULL,                -- pending | sent | refused | no_consent | expired
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    apple_status INTEGER,               -- HTTP status of Apple's last answer
                    apple_error INTEGER,                -- Apple's errorCode
                    body TEXT,                          -- the JSON sent
                    refund_preference TEXT,
                    sent_at INTEGER,                    -- Apple's 202 recorded
                    decision TEXT,                      -- refunded | declined (a later REFUND / REFUND_DECLINED)
                    decided_at INTEGER
                );
                CREATE INDEX consumption_requests_due ON consumption_requests(next_attempt_at) WHERE state = 'pending';
                CREATE INDEX consumption_requests_transaction ON consumption_requests(transaction_id);
                CREATE INDEX consumption_requests_user ON consumption_requests(user_id);
                CREATE TABLE consumption_consents (
                    user_id TEXT PRIMARY KEY,
                    customer_consented INTEGER NOT NULL CHECK (customer_consented IN (0, 1)),
                    last_used_at INTEGER,
                    updated_at INTEGER NOT NULL
                );
                """)
        }
        migrator.registerMigration("v16: when an endpoint got each event") { db in
            // An event's age limit counts from when its endpoint got it (the fan-out), not from when
            // it was written: an endpoint added later gets the events kept for it a full age limit
            // to deliver. NULL for the deliveries of before: their event's written time.
            try db.execute(sql: "ALTER TABLE event_deliveries ADD COLUMN queued_at INTEGER")
        }
        migrator.registerMigration("v17: retention") { db in
            // A run is pruned only when no audit row names it: the foreign key's check on each
            // delete, and the prune's own, read this index instead of the whole trail.
            try db.execute(sql: "CREATE INDEX subscription_events_run ON subscription_events(run_id) WHERE run_id IS NOT NULL")
        }
        registerLedger(&migrator)
        return migrator
    }
}
