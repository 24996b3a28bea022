import Foundation
import GRDB
import PostgresNIO
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
@testable import StatusPolling

/// The store's side of performance: batched writes that keep every per-row check exact, a selection
/// that reads indexes only, and the migration that adds those indexes to an existing database.
@Suite struct BatchedWriteTests {
    let t0 = AppleJSON.t0
    let day = AppleJSON.day
    let hour = AppleJSON.hour

    func verified(_ otid: String, expires: Int64? = nil) -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: otid, productID: "premium.monthly", environment: "Production",
            expiresAt: expires ?? t0 + 30 * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
    }

    func update(_ id: Int64, receipt: String, _ state: SubscriptionState, runID: Int64? = nil, newReceipt: String? = nil) -> ResultBatch.Result {
        .verified(VerifiedUpdate(subscriptionID: id, runID: runID, receiptSent: receipt, state: state, latestReceipt: newReceipt, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))
    }

    /// A value a column cannot hold (an expiration intent past PostgreSQL's INTEGER) is the row's
    /// own trouble, as a constraint is: the run retries the batch row by row and goes on, instead
    /// of stopping the night as when the database itself fails. SQLite holds the value.
    @Test(arguments: StoreKind.available) func aValueTheColumnCannotHoldIsTheRowsOwnTrouble(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "odd", receipt: "R-odd")
            var odd = verified("otid-odd")
            odd.expirationIntent = Int(Int32.max) + 1
            do {
                _ = try await db.store.apply(ResultBatch([update(id, receipt: "R-odd", odd)]))
                #expect(kind == .sqlite)
                #expect(try await db.store.subscription(id: id)?.state == odd)
            } catch {
                #expect(kind == .postgres)
                #expect(!(error is StoreError), "\(error)")
                #expect(try await db.store.subscription(id: id)?.state == .unverified)
            }
        }
    }

    /// A row's second result in one batch is planned on the row as the first left it (PostgreSQL
    /// once read the batch's rows once and wrote both failures as one, counting a single failure).
    @Test(arguments: StoreKind.available) func aRowsSecondResultInABatchSeesTheFirst(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "u", receipt: "R", verified("otid-1"))
            let failures = ["slow", "slower", "slowest"].map {
                ResultBatch.Result.failed(FailedVerification(subscriptionID: id, failure: .init(.timeout, $0), attemptedAtMs: t0))
            }
            _ = try await db.store.write(ResultBatch(failures))
            #expect(try await db.rawRow(id)?["consecutive_failures"] == "3")
            #expect(try await db.rawRow(id)?["last_error"] == "slowest")
            #expect(try await db.store.subscription(id: id)?.state == verified("otid-1"))
        }
    }

    @Test(arguments: StoreKind.available) func oneBatchKeepsEveryCheckExactRowByRow(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let first = try await db.insert(userID: "first", receipt: "R-shared")
            let second = try await db.insert(userID: "second", receipt: "R-shared-copy")
            let replaced = try await db.insert(userID: "replaced", receipt: "R-old")
            let failing = try await db.insert(userID: "failing", receipt: "R-fail", verified("otid-fail"))
            try await db.store.uploadReceipt(subscriptionID: replaced, receipt: "R-uploaded")
            let runID = try await db.store.startRun(RunStart(mode: .backfill, nowMs: t0, startedAtMs: t0, host: "h", pid: 1, options: [:]))

            let outcomes = try await db.store.write(ResultBatch([
                update(first, receipt: "R-shared", verified("otid-A"), runID: runID, newReceipt: "R-apple"),
                // The same chain, one row later in the same batch: the first row owns it now.
                update(second, receipt: "R-shared-copy", verified("otid-A"), runID: runID),
                // The web service replaced this receipt after it was sent.
                update(replaced, receipt: "R-old", verified("otid-R"), runID: runID),
                .failed(FailedVerification(subscriptionID: failing, runID: runID, failure: .init(.timeout, "slow"), attemptedAtMs: t0)),
                update(999, receipt: "R-gone", verified("otid-G"), runID: runID),
            ], checkpoint: (runID: runID, through: 777)))

            #expect(outcomes == [.written(previous: .unverified), .conflict(owner: first), .superseded, nil, .missing])
            #expect(try await db.store.subscription(id: first)?.state == verified("otid-A"))
            #expect(try await db.store.subscription(id: first)?.latestReceipt == "R-apple")
            #expect(try await db.store.subscription(id: second)?.state == .unverified)
            #expect(try await db.rawRow(second)?["last_error_reason"] == "conflict")
            #expect(try await db.store.subscription(id: replaced)?.state == .unverified)
            #expect(try await db.rawRow(replaced)?["latest_receipt"] == "R-uploaded")
            #expect(try await db.rawRow(failing)?["consecutive_failures"] == "1")
            #expect(try await db.store.subscription(id: failing)?.state == verified("otid-fail"))
            let checkpoint = try await db.row("SELECT checkpoint_id FROM poll_runs WHERE id = \(runID)")?["checkpoint_id"].flatMap { Int64($0) }
            #expect(checkpoint == 777)
            let reasons = try await db.rows("SELECT reason FROM subscription_events ORDER BY id").map { $0["reason"] }
            #expect(reasons == ["first_verified", "conflict"])
        }
    }

    @Test(arguments: StoreKind.available) func aBatchThatFailsWritesNothingAtAll(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let good = try await db.insert(userID: "good", receipt: "R-good")
            let poisoned = try await db.insert(userID: "poisoned", receipt: "R-poison")
            try await db.poisonUpdates(ofUser: "poisoned")
            // The database's own error, as it is (a StoreError would end a run): GRDB's, or PostgresNIO's.
            let error = await #expect(throws: (any Error).self) {
                try await db.store.write(ResultBatch([
                    update(good, receipt: "R-good", verified("otid-good")),
                    update(poisoned, receipt: "R-poison", verified("otid-poison")),
                ]))
            }
            #expect(kind == .sqlite ? error is DatabaseError : error is PSQLError, "\(String(describing: error))")
            // One transaction: the good row's write was rolled back with the batch.
            #expect(try await db.store.subscription(id: good)?.state == .unverified)
            let events = try await db.row("SELECT count(*) AS n FROM subscription_events")?["n"].flatMap { Int($0) }
            #expect(events == 0)
        }
    }

    @Test func theAuditSnapshotIsValidJSONThatReadsBack() throws {
        var odd = verified("otid \"quoted\" \\ slash/")
        odd.productID = "tab\tnew\nline\u{1}"
        odd.isInBillingRetry = true
        odd.expirationIntent = 2
        odd.cancelledAt = t0
        odd.autoRenewStatus = false
        odd.transactionID = "t\u{2028}\"x"
        odd.purchasedAt = t0 - 1
        odd.ownershipType = "FAMILY_SHARED"
        odd.billingPlanType = "MONTHLY"
        odd.commitmentPeriod = 3
        odd.commitmentPeriods = 12
        odd.commitmentExpiresAt = t0 + 1
        odd.renewalBillingPlanType = "BILLED_UPFRONT"
        let decoded = try JSONDecoder().decode(SubscriptionState.self, from: Data(odd.auditJSON.utf8))
        #expect(decoded == odd)
        #expect(SubscriptionState.unverified.auditJSON == #"{"is_in_billing_retry":false}"#)
    }

    /// The nightly selection must read indexes, never walk the table (and its receipts).
    /// SQLite only: SQLite's query plans (PostgresStoreTests has PostgreSQL's).
    @Test func theSelectionIsIndexBacked() async throws {
        try await withTemporaryDatabase { db in
            for index in 0..<200 {
                try db.insert(userID: "u\(index)", receipt: "r\(index)", index % 2 == 0 ? verified("otid-\(index)", expires: t0 + Int64(index) * day) : .unverified)
            }
            func plan(_ query: SQLStatement) async throws -> [String] {
                try await db.webService.read { d in
                    // id, parent, notused, detail.
                    try d.fetchAll(shared: SQLStatement(sqlite: "EXPLAIN QUERY PLAN " + query.sql(.sqlite), query.values)) { row in
                        _ = (try row.integer(), try row.integer(), try row.integer())
                        return try row.column() as String
                    }
                }
            }
            // Each term searches its own covering index: no table row (and no receipt) is read.
            let nightly = try await plan(DueSelectionSQL.select(.sqlite, .nightly(SelectionWindows()), nowMs: t0, after: 0, shared: false))
            #expect(nightly.filter { $0.contains("subscriptions") } == [
                "SEARCH subscriptions USING COVERING INDEX subscriptions_unverified (original_transaction_id=?)",
                "SEARCH subscriptions USING COVERING INDEX subscriptions_user_id (user_id=?)",
                "SEARCH subscriptions USING COVERING INDEX subscriptions_uploaded_user (receipt_uploaded=?)",
                "SEARCH subscriptions USING COVERING INDEX subscriptions_expires_at (expires_at>? AND expires_at<?)",
                "SEARCH subscriptions USING COVERING INDEX subscriptions_billing_retry (expires_at>?)",
                "SEARCH subscriptions USING COVERING INDEX subscriptions_grace_period_expires_at (grace_period_expires_at>?)",
                // The lapsed sweep: one search of the same index per turn of tonight's.
                "SEARCH s USING COVERING INDEX subscriptions_expires_at (expires_at>? AND expires_at<?)",
                // Each selected row's freshness (`--fresh-within`), from an index holding every column of the rule.
                "SEARCH f USING COVERING INDEX subscriptions_fresh (id=?)",
            ])
            let backfill = try await plan(DueSelectionSQL.select(.sqlite, .backfill(runID: 1), nowMs: t0, after: 10, shared: false))
            #expect(backfill == ["SEARCH backfill_targets USING PRIMARY KEY (run_id=? AND subscription_id>?)"])
            let page = try await plan(SubscriptionRowSQL.rows(ids: [1, 5, 9]))
            #expect(page == ["SEARCH subscriptions USING INTEGER PRIMARY KEY (rowid=?)"])
        }
    }

    /// SQLite only: SQLite's own migrations (PostgresStoreTests has PostgreSQL's).
    @Test func migrationV3AddsTheIndexesToADatabaseOfTheFirstRelease() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("status-poller-v2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        let old = try DatabasePool(path: path)
        try SQLiteSchema.migrator.migrate(old, upTo: "v2: run history, audit trail, backfill targets")
        try await old.write { d in
            try d.execute(sql: "INSERT INTO subscriptions (user_id, latest_receipt) VALUES ('new', 'R1')")
            try d.execute(literal: "INSERT INTO subscriptions (user_id, latest_receipt, original_transaction_id, expires_at, is_in_billing_retry) VALUES ('retry', 'R2', 'otid-2', \(t0 - 10 * day), 1)")
            try d.execute(literal: "INSERT INTO subscriptions (user_id, latest_receipt, original_transaction_id, expires_at) VALUES ('far', 'R3', 'otid-3', \(t0 + 90 * day))")
        }
        try old.close()

        let (store, applied) = try SQLiteSubscriptionStore.migrate(path: path)
        defer { try? store.close() }
        #expect(applied == ["v3: index-backed nightly selection", "v4: the backend that answered", "v5: hear the end of billing retry, and a user's every row on an upload", "v6: the lapsed sweep", "v7: who brought an answer, and the newer answer wins", "v8: App Store Server Notifications", "v9: notification history checkpoints", "v10: rows with fresh Apple data", "v11: the build of each run", "v12: the chain's transactions, and Apple's status as the check", "v13: events outbox", "v14: renewal extensions", "v15: consumption requests", "v16: when an endpoint got each event", "v17: retention", "v18: the transaction ledger", "v19: recoveries in the ledger", "v20: paid periods in subscription order", "v21: the notification lag on the audit trail", "v22: the report's columns on the audit trail", "v23: the ledger's offers in subscription order"])
        #expect(try await store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: t0, after: 0) == [1, 2])
        #expect(try await store.subscriptions(ids: [1, 2, 3]).map(\.userID) == ["new", "retry", "far"])
        let indexes = try await store.pool.read { d in
            try String.fetchAll(d, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'subscriptions' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        }
        #expect(indexes == [
            "subscriptions_app_account_token", "subscriptions_billing_retry", "subscriptions_expires_at", "subscriptions_fresh",
            "subscriptions_grace_period_expires_at", "subscriptions_unverified", "subscriptions_uploaded_user", "subscriptions_user_id",
        ])
    }
}
