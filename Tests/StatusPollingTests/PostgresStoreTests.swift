import Foundation
import Logging
import PostgresNIO
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import PostgresStore
@testable import StatusPolling

/// What only the PostgreSQL store has: TLS as `sslmode` asks, logins refused with a message that
/// never shows the password, versioned migrations that refuse a newer schema, an index-backed
/// selection, and the command line's refusal of a password in `--database`.
@Suite(.enabled(if: PostgresTestServer.url != nil))
struct PostgresStoreTests {
    var logger: Logger { PostgresTestServer.logger }

    /// Whether the connection of `location` runs TLS, as the server sees it.
    func usesTLS(_ location: PostgresLocation) async throws -> Bool {
        let connector = try await PostgresConnector.connect(location, maximumConnections: 1, logger: logger)
        defer { connector.close() }
        return try await connector.withConnection { connection in
            try await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger).decode(Bool.self).collect().first ?? false
        }
    }

    @Test func sslModesAreHonoured() async throws {
        let url = try #require(PostgresTestServer.url)
        let ca = try #require(PostgresTestServer.certificateAuthority)
        var base = try PostgresLocation(url, environment: [:])
        base.connectTimeout = PostgresTestServer.connectTimeoutSeconds
        var full = base
        full.host = "localhost"
        full.sslMode = .verifyFull
        full.sslRootCertificate = ca
        #expect(try await usesTLS(full))
        var require = base
        require.sslMode = .require
        #expect(try await usesTLS(require))
        var disable = base
        disable.sslMode = .disable
        #expect(try await !usesTLS(disable))
        // verify-full against the system's roots: the throwaway CA is not among them.
        var untrusted = full
        untrusted.sslRootCertificate = nil
        await #expect(throws: StoreError.self) { try await usesTLS(untrusted) }
        // verify-full checks the name: the certificate is for localhost and 127.0.0.1 only.
        var wrongName = full
        wrongName.host = "127.0.0.2"
        await #expect(throws: StoreError.self) { try await usesTLS(wrongName) }
    }

    @Test func aRefusedLoginNamesTheUserAndWhereThePasswordCameFromNeverThePassword() async throws {
        var location = try PostgresLocation(try #require(PostgresTestServer.url), environment: [:])
        location.connectTimeout = PostgresTestServer.connectTimeoutSeconds
        location.password = "not-the-password-4711"
        location.passwordSource = "PGPASSWORD"
        do {
            _ = try await PostgreSQLDatabase(location: location, worker: "w", logger: logger).open()
            Issue.record("a wrong password was accepted")
        } catch let error as StoreError {
            guard case .rejected(let name, let reason) = error else { Issue.record("\(error)"); return }
            #expect(name == location.name)
            #expect(reason.contains("password authentication failed for user \"poller\""))
            #expect(reason.contains("the password from PGPASSWORD"))
            #expect(!"\(error)".contains("not-the-password-4711"))
            #expect(!"\(error)".contains(PostgresTestServer.password))
        }
        location.database = "no_such_database"
        location.password = PostgresTestServer.password
        await #expect(throws: StoreError.self) { try await PostgreSQLDatabase(location: location, worker: "w", logger: logger).open() }
    }

    @Test func openRefusesAnUnmigratedOrNewerSchemaAndMigrateAppliesEachMigrationOnce() async throws {
        let location = try await PostgresTestServer.createDatabase()
        defer { Task { await PostgresTestServer.dropDatabase(location) } }
        let database = PostgreSQLDatabase(location: location, worker: "w", logger: logger)
        await #expect(throws: StoreError.notMigrated(path: location.name, current: nil, required: "v21: the ledger's offers in subscription order")) { try await database.open() }
        #expect(await database.isReplaceableByDemo())
        #expect(try await database.migrate() == ["v1: subscriptions and entitlements", "v2: run history, audit trail, shared work", "v3: leases", "v4: hear the end of billing retry, and a user's every row on an upload", "v5: the lapsed sweep", "v6: who brought an answer, and the newer answer wins", "v7: App Store Server Notifications", "v8: notification history checkpoints", "v9: rows with fresh Apple data", "v10: the build of each run", "v11: the chain's transactions, and Apple's status as the check", "v12: events outbox", "v13: renewal extensions", "v14: consumption requests", "v15: when an endpoint got each event", "v16: retention", "v17: the transaction ledger", "v18: recoveries in the ledger", "v19: the notification lag on the audit trail", "v20: the report's columns on the audit trail", "v21: the ledger's offers in subscription order"])
        #expect(try await database.migrate() == [])
        let store = try await database.open()
        try await store.enroll(userID: "a-real-user", receipt: "R")
        try await store.close()
        #expect(await !database.isReplaceableByDemo())
        try await PostgresTestServer.execute(location, "INSERT INTO schema_migrations (identifier, applied_order) VALUES ('v99: from the future', 99)")
        await #expect(throws: StoreError.schemaTooNew(path: location.name, unknown: ["v99: from the future"], known: "v21: the ledger's offers in subscription order")) { try await database.open() }
        await #expect(throws: StoreError.schemaTooNew(path: location.name, unknown: ["v99: from the future"], known: "v21: the ledger's offers in subscription order")) { try await database.migrate() }
    }

    @Test func theNightlySelectionReadsIndexesOnly() async throws {
        try await withStore(.postgres) { db in
            // 20,000 verified rows far from expiry and a few due ones, as a real table is.
            try await db.execute("""
                INSERT INTO subscriptions (user_id, latest_receipt, original_transaction_id, product_id, expires_at, last_verified_at)
                SELECT 'u' || n, repeat('x', 200), 'otid-' || n, 'p', 1900000000000 + n, 1700000000000 FROM generate_series(1, 20000) AS n
                """)
            try await db.execute("UPDATE subscriptions SET expires_at = 1800000000000 WHERE id % 1000 = 0")
            // Lapsed on the UTC day a week before the night's (its turn), and six days before (not).
            try await db.execute("UPDATE subscriptions SET expires_at = 1799400000000 WHERE id % 1000 = 500")
            try await db.execute("UPDATE subscriptions SET expires_at = 1799500000000 WHERE id % 1000 = 250")
            try await db.execute("ANALYZE subscriptions")
            let sql = DueSelectionSQL.nightlyPostgres(SelectionWindows(), nowMs: 1_800_000_000_000)
            let explained = try await (db.store as! PostgresSubscriptionStore).read { connection, logger in
                try await connection.query(PostgresQuery(unsafeSQL: "EXPLAIN \(sql)"), logger: logger).decode(String.self).collect()
            }
            #expect(!explained.contains { $0.contains("Seq Scan") }, "\(explained.joined(separator: "\n"))")
            for index in ["subscriptions_unverified", "subscriptions_uploaded_user", "subscriptions_expires_at", "subscriptions_billing_retry", "subscriptions_grace_period_expires_at", "subscriptions_pkey"] {
                #expect(explained.contains { $0.contains(index) }, "\(index) unused:\n\(explained.joined(separator: "\n"))")
            }
            // Both `expires_at` terms (near expiry, the lapsed sweep: one search per turn) use the
            // index, the sweep's with the retry flag in its condition (no row is read to check it).
            #expect(explained.filter { $0.contains("Scan using subscriptions_expires_at") }.count == 2, "\(explained.joined(separator: "\n"))")
            #expect(explained.contains { $0.contains("Index Cond: ((expires_at >= \"*VALUES*\".column1) AND (expires_at <= \"*VALUES*\".column2) AND (is_in_billing_retry = 0))") })
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: 1_800_000_000_000, after: 0) == (1...40).map { Int64($0 * 500) })
            var withoutSweep = SelectionWindows()
            withoutSweep.lapsed = nil
            #expect(try await db.store.dueSubscriptionIDs(.nightly(withoutSweep), nowMs: 1_800_000_000_000, after: 0) == (1...20).map { Int64($0 * 1000) })
        }
    }

    /// Mid-night, with the night analysed (autovacuum does it on its own), the lease must still
    /// walk the pending index from where the worker left off, not `subscriptions` from its first id.
    @Test func theLeaseWalksTheNightsPendingRowsNotTheTable() async throws {
        try await withStore(.postgres) { db in
            // As the bench's table: every 25th row new and so due tonight, the others verified.
            try await db.execute("""
                INSERT INTO subscriptions (user_id, latest_receipt, original_transaction_id, product_id, expires_at, last_verified_at)
                SELECT 'u' || n, repeat('x', 200), CASE WHEN n % 25 = 0 THEN NULL ELSE 'otid-' || n END, 'p',
                    CASE WHEN n % 25 = 0 THEN NULL ELSE 1900000000000 + n END, CASE WHEN n % 25 = 0 THEN NULL ELSE 1700000000000 END
                FROM generate_series(1, 100000) AS n
                """)
            let store = try await (db.database(worker: "w", leaseDuration: .seconds(300)) as! PostgreSQLDatabase).openStore()
            defer { Task { try? await store.close() } }
            let nowMs: Int64 = 1_800_000_000_000
            let run = try await store.startRun(RunStart(mode: .nightly, nowMs: nowMs, startedAtMs: nowMs, host: "h", pid: 1, options: [:]))
            #expect(try await store.joinWork(runID: run, selection: .nightly(SelectionWindows()), nowMs: nowMs).remaining == 4000)
            // Half the night written.
            try await db.execute("UPDATE work_targets SET done = true WHERE subscription_id <= 50000")
            try await db.execute("ANALYZE subscriptions")
            try await db.execute("ANALYZE work_targets")
            let query = WorkSharingSQL.lease(runID: run, worker: "w", limit: 64, after: 50000, leaseMs: 300_000)
            let plan = try await store.transaction { session in
                for setting in WorkSharingSQL.leasePlanSettings { try await session.execute(setting) }
                return try await session.rows("EXPLAIN \(query)") { row -> String in try row.column() }
            }
            let text = plan.joined(separator: "\n")
            #expect(!text.contains("Merge Join") && !text.contains("Hash Join") && !text.contains("Seq Scan"), "\(text)")
            #expect(text.contains("Index Scan using work_targets_pending on work_targets t"), "\(text)")
            #expect(try await store.lease(runID: run, limit: 64, after: 50000).map(\.id) == (0..<64).map { 50025 + Int64($0) * 25 })
        }
    }

    /// The report's offer conversion reads v21's index of the offers alone (no pass over the
    /// ledger), and the ledger's sums run without JIT or parallel workers in their own transaction
    /// (`RevenueSQL.sumsPlanSettings`), the pool's connections keeping the server's settings.
    @Test func offerConversionReadsTheOffersIndexAndTheSumsRunWithoutJIT() async throws {
        try await withStore(.postgres) { db in
            let store = db.store as! PostgresSubscriptionStore
            // 5,000 chains of ten months: a free trial, then nine paid months, every fourth chain's refunded.
            try await store.execute("""
                INSERT INTO subscription_transactions (transaction_id, original_transaction_id, subscription_id, purchased_at, expires_at,
                    revoked_at, price, currency, offer_type, offer_discount_type, as_of, first_source, first_seen_at, updated_at)
                SELECT 't' || n, 'o' || n / 10, n / 10 + 1, 1700000000000 + n % 10 * 2592000000, 1700000000000 + (n % 10 + 1) * 2592000000,
                    CASE WHEN n % 10 > 0 AND n / 10 % 4 = 0 THEN 1800000000000 END, CASE WHEN n % 10 = 0 THEN 0 ELSE 4990 END, 'USD',
                    CASE WHEN n % 10 = 0 THEN 1 END, CASE WHEN n % 10 = 0 THEN 'FREE_TRIAL' END, 1700000000000, 'poll', 1700000000000, 1700000000000
                FROM generate_series(0, 49999) AS n
                """)
            // As autovacuum leaves a live ledger: its pages all-visible, so an index of them is read alone.
            try await PostgresTestServer.execute(try #require(db.postgresLocation), "VACUUM ANALYZE subscription_transactions")
            let read: SQLStatement = "SELECT current_setting('jit') || ' ' || current_setting('max_parallel_workers_per_gather')"
            let server = try await store.rows(read) { row -> String in try row.column() }
            let sums = try await store.transaction { session in
                for setting in RevenueSQL.sumsPlanSettings { try await session.execute(setting) }
                return try await session.rows(read) { row -> String in try row.column() }
            }
            #expect(sums == ["off 0"])
            // Only that transaction's (`SET LOCAL`): the pool's next read, on the connection it just had back, sees the server's.
            #expect(try await store.rows(read) { row -> String in try row.column() } == server)
            let offers = RevenueSQL.offers(.postgres, toMs: 1_900_000_000_000, environment: nil)
            let plan = try await store.rows("EXPLAIN \(offers)") { row -> String in try row.column() }.joined(separator: "\n")
            // Neither the starts nor their earlier transactions are a pass over the ledger: both are
            // read from the index, a bitmap of it or the index alone in order, as the planner finds
            // cheaper for this table (at the bench's 1,000,000 transactions and up, the latter).
            #expect(plan.components(separatedBy: " subscription_transactions_offers ").count == 3, "\(plan)")
            #expect(!plan.contains("Seq Scan"), "\(plan)")
            #expect(try await store.revenueSums(toMs: 1_900_000_000_000, environment: nil).offers == [RevenueReport.Sums.Offer(day: 19_675, offerType: 1, discountType: "FREE_TRIAL", starts: 5_000, converted: 3_750)])
        }
    }

    @Test func theCommandLineRefusesAPasswordInDatabaseAndNeverPrintsOne() async throws {
        let url = try #require(PostgresTestServer.url)
        let refused = try await StatusPollerProcess.launch(["runs", "--database", url]).outcome()
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--database carries a password, which other users of this host can read (ps)"))
        #expect(!refused.stderr.contains(PostgresTestServer.password))
        // The same URL from the environment is fine, and messages name it without the password.
        let location = try await PostgresTestServer.createDatabase()
        defer { Task { await PostgresTestServer.dropDatabase(location) } }
        var withPassword = URLComponents(string: url)!
        withPassword.path = "/" + location.database
        let migrate = try await StatusPollerProcess.launch(["migrate"], environment: ["STATUS_POLLER_DATABASE": withPassword.string!]).outcome()
        #expect(migrate.status == 0)
        #expect(migrate.stdout == "applied 21 migration(s) to \(location.name): v1: subscriptions and entitlements, v2: run history, audit trail, shared work, v3: leases, v4: hear the end of billing retry, and a user's every row on an upload, v5: the lapsed sweep, v6: who brought an answer, and the newer answer wins, v7: App Store Server Notifications, v8: notification history checkpoints, v9: rows with fresh Apple data, v10: the build of each run, v11: the chain's transactions, and Apple's status as the check, v12: events outbox, v13: renewal extensions, v14: consumption requests, v15: when an endpoint got each event, v16: retention, v17: the transaction ledger, v18: recoveries in the ledger, v19: the notification lag on the audit trail, v20: the report's columns on the audit trail, v21: the ledger's offers in subscription order\n")
        let runs = try await StatusPollerProcess.launch(["runs", "--database", location.name], environment: ["PGPASSWORD": PostgresTestServer.password]).outcome()
        #expect(runs.status == 0)
        #expect(runs.stdout == "no runs yet in \(location.name)\n")
        for output in [migrate.stdout, migrate.stderr, runs.stdout, runs.stderr] { #expect(!output.contains(PostgresTestServer.password)) }
    }
}
