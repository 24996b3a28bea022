import Foundation
import GRDB
import Testing

@testable import SQLiteStore
@testable import StatusPolling

/// The SQLite store on real files: the schema contract, the selection, and writes that never touch a
/// contract column on failure.
@Suite struct SQLiteStoreTests {
    let t0 = AppleJSON.t0
    let day = AppleJSON.day
    let hour = AppleJSON.hour

    var verified: SubscriptionState {
        SubscriptionState(
            originalTransactionID: "1000000001", productID: "premium.monthly", environment: "Production",
            expiresAt: t0 + 30 * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
    }

    @Test func migrateIsIdempotentAndCreatesTheContract() async throws {
        try await withTemporaryDatabase { db in
            let again = try SQLiteSubscriptionStore.migrate(path: db.path)
            try again.store.close()
            #expect(again.applied == [])
            let columns = try db.webService.read { d in try Row.fetchAll(d, sql: "PRAGMA table_info(subscriptions)").map { $0["name"] as String } }
            #expect(Array(columns.prefix(13)) == [
                "id", "user_id", "latest_receipt", "original_transaction_id", "product_id", "environment", "expires_at",
                "grace_period_expires_at", "is_in_billing_retry", "auto_renew_status", "auto_renew_product_id",
                "expiration_intent", "cancelled_at",
            ])
            let viewColumns = try db.webService.read { d in try Row.fetchAll(d, sql: "PRAGMA table_info(entitlements)").map { $0["name"] as String } }
            for name in ["user_id", "product_id", "expires_at", "grace_period_expires_at", "is_in_billing_retry", "state", "is_entitled"] {
                #expect(viewColumns.contains(name))
            }
            let journal = try db.webService.read { d in try String.fetchOne(d, sql: "PRAGMA journal_mode") }
            #expect(journal == "wal")
        }
    }

    @Test func firstMigrationReportsWhatItApplied() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, applied) = try SQLiteSubscriptionStore.migrate(path: directory.appendingPathComponent("x.sqlite").path)
        try store.close()
        #expect(applied == ["v1: subscriptions and entitlements", "v2: run history, audit trail, backfill targets", "v3: index-backed nightly selection", "v4: the backend that answered"])
    }

    @Test func openRefusesMissingUnmigratedAndNewerDatabases() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.sqlite").path
        #expect(throws: StoreError.missing(path: missing)) { try SQLiteSubscriptionStore.open(path: missing) }
        #expect(!FileManager.default.fileExists(atPath: missing))

        let empty = directory.appendingPathComponent("empty.sqlite").path
        try DatabaseQueue(path: empty).close()
        #expect(throws: StoreError.notMigrated(path: empty, current: nil, required: "v4: the backend that answered")) { try SQLiteSubscriptionStore.open(path: empty) }

        // An older schema: v1 and v2 applied by an older binary.
        let older = directory.appendingPathComponent("older.sqlite").path
        let olderQueue = try DatabaseQueue(path: older)
        try SQLiteSchema.migrator.migrate(olderQueue, upTo: "v2: run history, audit trail, backfill targets")
        try olderQueue.close()
        #expect(throws: StoreError.notMigrated(path: older, current: "v2: run history, audit trail, backfill targets", required: "v4: the backend that answered")) {
            try SQLiteSubscriptionStore.open(path: older)
        }
        #expect(StoreError.notMigrated(path: older, current: "v2: x", required: "v3: y").description
            == "the database at \(older) is at schema 'v2: x'; this status-poller needs 'v3: y'. Run `status-poller migrate --database \(older)` first.")

        let newer = directory.appendingPathComponent("newer.sqlite").path
        try SQLiteSubscriptionStore.migrate(path: newer).store.close()
        let queue = try DatabaseQueue(path: newer)
        try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')") }
        try queue.close()
        #expect(throws: StoreError.schemaTooNew(path: newer, unknown: ["v99: from the future"], known: "v4: the backend that answered")) {
            try SQLiteSubscriptionStore.open(path: newer)
        }
        // `migrate` refuses it too, and leaves it as it was.
        #expect(throws: StoreError.schemaTooNew(path: newer, unknown: ["v99: from the future"], known: "v4: the backend that answered")) {
            try SQLiteSubscriptionStore.migrate(path: newer)
        }

        let garbage = directory.appendingPathComponent("garbage.sqlite").path
        try Data("this is not a database, just text that is long enough to have a header".utf8).write(to: URL(fileURLWithPath: garbage))
        #expect(throws: StoreError.corrupt(path: garbage, reason: "file is not a database")) { try SQLiteSubscriptionStore.open(path: garbage) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: garbage)) == Data("this is not a database, just text that is long enough to have a header".utf8))
    }

    @Test func aDatabaseLockedPastTheBusyTimeoutIsReportedAsBusy() async throws {
        try await withTemporaryDatabase { db in
            // Only the holder has the file open, as when a backup or the web service locks it.
            try db.store.close()
            try db.webService.close()
            let holder = try DatabaseQueue(path: db.path)
            try await holder.writeWithoutTransaction { d in
                try d.execute(sql: "BEGIN IMMEDIATE")
                #expect(throws: StoreError.busy(path: db.path, seconds: 0.2)) { try SQLiteSubscriptionStore.open(path: db.path, busyTimeout: 0.2) }
                try d.execute(sql: "ROLLBACK")
            }
            try holder.close()
            try SQLiteSubscriptionStore.open(path: db.path).close()
            #expect("\(StoreError.busy(path: "x.sqlite", seconds: 10))".contains("more than 10 s"))
        }
    }

    @Test func entitlementsViewAgreesWithTheDecisionsStates() async throws {
        try await withTemporaryDatabase { db in
            // The view reads the real clock, so the rows are placed around it.
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var cases: [(SubscriptionState, EntitlementState)] = []
            var s = verified
            s.expiresAt = now + day
            cases.append((s, .active))
            s.expiresAt = now - day
            s.gracePeriodExpiresAt = now + day
            s.isInBillingRetry = true
            cases.append((s, .gracePeriod))
            s.gracePeriodExpiresAt = now - hour
            cases.append((s, .billingRetry))
            s.isInBillingRetry = false
            cases.append((s, .expired))
            s = verified
            s.expiresAt = now + day
            s.cancelledAt = now - day
            cases.append((s, .refunded))
            cases.append((.unverified, .unverified))
            for (index, (state, expected)) in cases.enumerated() {
                var state = state
                if state.originalTransactionID != nil { state.originalTransactionID = "otid-\(index)" }
                let id = try db.insert(userID: "u\(index)", receipt: "r\(index)", state)
                let row = try db.webService.read { d in try Row.fetchOne(d, sql: "SELECT state, is_entitled FROM entitlements WHERE subscription_id = ?", arguments: [id]) }
                #expect(row?["state"] == expected.rawValue)
                #expect(row?["is_entitled"] == (expected.isEntitled ? 1 : 0))
                #expect(state.entitlement(at: now) == expected)
            }
        }
    }

    @Test func selectionTakesOnlyRowsWhoseAccessMayChange() async throws {
        try await withTemporaryDatabase { db in
            let now = t0 + 100 * day
            var rows: [(String, SubscriptionState, Bool)] = []
            func add(_ name: String, _ change: (inout SubscriptionState) -> Void, due: Bool) {
                var s = verified
                s.originalTransactionID = name
                change(&s)
                rows.append((name, s, due))
            }
            rows.append(("unverified", .unverified, true))
            add("expires in 23h", { $0.expiresAt = now + 23 * hour }, due: true)
            add("expires in 24h exactly", { $0.expiresAt = now + 24 * hour }, due: true)
            add("expires in 25h", { $0.expiresAt = now + 25 * hour }, due: false)
            add("active far from expiry", { $0.expiresAt = now + 20 * day }, due: false)
            add("expired 47h ago", { $0.expiresAt = now - 47 * hour }, due: true)
            add("expired 49h ago", { $0.expiresAt = now - 49 * hour }, due: false)
            add("billing retry 59 days past expiry", { $0.expiresAt = now - 59 * day; $0.isInBillingRetry = true }, due: true)
            add("billing retry 61 days past expiry", { $0.expiresAt = now - 61 * day; $0.isInBillingRetry = true }, due: false)
            add("in grace", { $0.expiresAt = now - 5 * day; $0.gracePeriodExpiresAt = now + 5 * day }, due: true)
            add("grace ended 23h ago", { $0.expiresAt = now - 16 * day; $0.gracePeriodExpiresAt = now - 23 * hour }, due: true)
            add("grace ended 25h ago", { $0.expiresAt = now - 16 * day; $0.gracePeriodExpiresAt = now - 25 * hour }, due: false)
            add("refunded long ago", { $0.expiresAt = now - 90 * day; $0.cancelledAt = now - 95 * day }, due: false)
            var expectedIDs: [Int64] = []
            for (name, state, due) in rows {
                let id = try db.insert(userID: name, receipt: "receipt of \(name)", state)
                if due { expectedIDs.append(id) }
                #expect(SelectionWindows().bounds(nowMs: now).selects(state) == due, "\(name)")
            }
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: now, after: 0) == expectedIDs)
            // Narrower windows are honoured.
            let narrow = SelectionWindows(nearExpiryBefore: .seconds(0), nearExpiryAfter: .seconds(0))
            let narrowRows = try await db.store.subscriptions(ids: try await db.store.dueSubscriptionIDs(.nightly(narrow), nowMs: now, after: 0))
            let narrowIDs = narrowRows.map(\.userID)
            #expect(narrowIDs == ["unverified", "billing retry 59 days past expiry", "in grace", "grace ended 23h ago"])
        }
    }

    @Test func selectionResumesAfterACursorAndReadsRowsByID() async throws {
        try await withTemporaryDatabase { db in
            for index in 0..<25 { try db.insert(userID: "u\(index)", receipt: "r\(index)") }
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: t0, after: 0) == Array(1...25))
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: t0, after: 18) == Array(19...25))
            try await db.webService.write { d in try d.execute(sql: "DELETE FROM subscriptions WHERE id = 3") }
            let rows = try await db.store.subscriptions(ids: [5, 3, 1, 2])
            #expect(rows.map(\.id) == [1, 2, 5])
            #expect(rows.map(\.userID) == ["u0", "u1", "u4"])
            #expect(rows.map(\.latestReceipt) == ["r0", "r1", "r4"])
            #expect(try await db.store.subscriptions(ids: []).isEmpty)
        }
    }

    @Test func failureTouchesBookkeepingOnly() async throws {
        try await withTemporaryDatabase { db in
            let id = try db.insert(userID: "u1", receipt: "R1", verified)
            let before = try db.contractColumns(id)
            let failure = VerificationFailure(.appleStatus, "Apple answered status 21003", upstreamStatus: .verifyReceipt(.notAuthenticated))
            try await db.store.recordFailure(.init(subscriptionID: id, failure: failure, attemptedAtMs: t0))
            try await db.store.recordFailure(.init(subscriptionID: id, failure: failure, attemptedAtMs: t0 + 1))
            #expect(try db.contractColumns(id) == before)
            let row = try #require(try db.rawRow(id))
            #expect(row["latest_receipt"] == "R1")
            #expect(row["last_attempt_at"] == t0 + 1)
            #expect(row["last_apple_status"] == 21003)
            #expect(row["last_error_reason"] == "apple_status")
            #expect(row["last_error"] == "Apple answered status 21003")
            #expect(row["consecutive_failures"] == 2)
            #expect(row["last_verified_at"] == nil as Int64?)
        }
    }

    @Test func verifiedWriteReplacesContractColumnsAndReceipt() async throws {
        try await withTemporaryDatabase { db in
            let id = try db.insert(userID: "u1", receipt: "R1")
            try await db.store.recordFailure(.init(subscriptionID: id, failure: .init(.timeout, "slow"), attemptedAtMs: t0))
            let result = try await db.store.recordVerified(.init(subscriptionID: id, receiptSent: "R1", state: verified, latestReceipt: "R1-NEW", upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0 + 5))
            #expect(result == .written(previous: .unverified))
            let row = try #require(try await db.store.subscription(id: id))
            #expect(row.state == verified)
            #expect(row.latestReceipt == "R1-NEW")
            let raw = try #require(try db.rawRow(id))
            #expect(raw["consecutive_failures"] == 0)
            #expect(raw["last_error_reason"] == nil as String?)
            #expect(raw["last_verified_at"] == t0 + 5)
            // Without a new latest_receipt the stored one stays.
            var renewed = verified
            renewed.expiresAt = t0 + 60 * day
            #expect(try await db.store.recordVerified(.init(subscriptionID: id, receiptSent: "R1-NEW", state: renewed, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0 + 6)) == .written(previous: verified))
            #expect(try await db.store.subscription(id: id)?.latestReceipt == "R1-NEW")
            #expect(try await db.store.subscription(id: id)?.state == renewed)
        }
    }

    @Test func replacedReceiptSupersedesTheAnswer() async throws {
        try await withTemporaryDatabase { db in
            let id = try db.insert(userID: "u1", receipt: "R1", verified)
            try await db.webService.write { d in try d.execute(sql: "UPDATE subscriptions SET latest_receipt = 'R2' WHERE id = ?", arguments: [id]) }
            let before = try db.contractColumns(id)
            var renewed = verified
            renewed.expiresAt = t0 + 60 * day
            let result = try await db.store.recordVerified(.init(subscriptionID: id, receiptSent: "R1", state: renewed, latestReceipt: "R1-NEW", upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))
            #expect(result == .superseded)
            #expect(try db.contractColumns(id) == before)
            #expect(try db.rawRow(id)?["latest_receipt"] == "R2")
            #expect(try await db.store.recordVerified(.init(subscriptionID: 999, receiptSent: "R1", state: renewed, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0)) == .missing)
        }
    }

    @Test func chainOwnedByAnotherRowIsAConflictAndGrantsNothing() async throws {
        try await withTemporaryDatabase { db in
            let owner = try db.insert(userID: "alice", receipt: "R-alice", verified)
            let replayer = try db.insert(userID: "mallory", receipt: "R-alice-copy")
            let before = try db.contractColumns(replayer)
            let result = try await db.store.recordVerified(.init(subscriptionID: replayer, receiptSent: "R-alice-copy", state: verified, latestReceipt: "R-new", upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))
            #expect(result == .conflict(owner: owner))
            #expect(try db.contractColumns(replayer) == before)
            let raw = try #require(try db.rawRow(replayer))
            #expect(raw["latest_receipt"] == "R-alice-copy")
            #expect(raw["last_error_reason"] == "conflict")
            #expect(raw["last_error"] == "original_transaction_id 1000000001 belongs to subscription \(owner)")
            #expect(try await db.store.subscriptionID(owning: "1000000001") == owner)
        }
    }

    @Test func anUploadedReceiptMakesALapsedRowDueUntilVerified() async throws {
        try await withTemporaryDatabase { db in
            let now = t0 + 200 * day
            let id = try db.insert(userID: "lapsed", receipt: "R-old", verified)
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: now, after: 0).isEmpty)
            try await db.store.uploadReceipt(subscriptionID: id, receipt: "R-resubscribed")
            let due = try await db.store.subscriptions(ids: try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: now, after: 0))
            #expect(due.map(\.id) == [id])
            #expect(due.first?.receiptUploaded == true)
            #expect(SelectionWindows().bounds(nowMs: now).selects(verified, receiptUploaded: true))
            // The poller's own write, which replaces the receipt with Apple's, clears the flag.
            var renewed = verified
            renewed.expiresAt = now + 30 * day
            _ = try await db.store.recordVerified(.init(subscriptionID: id, receiptSent: "R-resubscribed", state: renewed, latestReceipt: "R-apple", upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: now))
            #expect(try db.rawRow(id)?["receipt_uploaded"] == 0)
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: now, after: 0).isEmpty)
            // A failure leaves it due.
            try await db.store.uploadReceipt(subscriptionID: id, receipt: "R-again")
            try await db.store.recordFailure(.init(subscriptionID: id, failure: .init(.timeout, "slow"), attemptedAtMs: now + 1))
            #expect(try db.rawRow(id)?["receipt_uploaded"] == 1)
        }
    }

    @Test func walksEveryRowWithItsBookkeeping() async throws {
        try await withTemporaryDatabase { db in
            let a = try db.insert(userID: "a", receipt: "Ra", verified)
            let b = try db.insert(userID: "b", receipt: "Rb")
            try await db.store.recordFailure(.init(subscriptionID: b, failure: .init(.appleStatus, "Apple answered status 21003", upstreamStatus: .verifyReceipt(.notAuthenticated)), attemptedAtMs: t0))
            let page = try await db.store.subscriptionsWithBookkeeping(after: 0, limit: 10)
            #expect(page.map(\.0.id) == [a, b])
            #expect(page[0].1 == SubscriptionBookkeeping())
            #expect(page[1].1 == SubscriptionBookkeeping(lastAttemptAt: t0, lastAppleStatus: 21003, lastErrorReason: "apple_status", lastError: "Apple answered status 21003", consecutiveFailures: 1))
            #expect(try await db.store.subscriptionsWithBookkeeping(after: b, limit: 10).isEmpty)
        }
    }

    @Test func everyContractChangeWritesOneAuditEventInTheSameTransaction() async throws {
        try await withTemporaryDatabase { db in
            let id = try db.insert(userID: "u1", receipt: "R1")
            let runID = try await db.store.startRun(RunStart(mode: .nightly, nowMs: t0, startedAtMs: t0, host: "h", pid: 1, options: [:]))
            _ = try await db.store.recordVerified(.init(subscriptionID: id, runID: runID, receiptSent: "R1", state: verified, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))
            // The same answer again: nothing changed, no event.
            _ = try await db.store.recordVerified(.init(subscriptionID: id, runID: runID, receiptSent: "R1", state: verified, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0 + 1))
            var grace = verified
            grace.isInBillingRetry = true
            grace.gracePeriodExpiresAt = t0 + 46 * day
            grace.expirationIntent = 2
            _ = try await db.store.recordVerified(.init(subscriptionID: id, runID: runID, receiptSent: "R1", state: grace, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0 + 31 * day))
            // A failure writes no event.
            try await db.store.recordFailure(.init(subscriptionID: id, runID: runID, failure: .init(.timeout, "slow"), attemptedAtMs: t0 + 32 * day))
            let events = try await db.store.history(userID: "u1")
            #expect(events.map(\.reason) == ["entered_grace", "first_verified"])
            #expect(events.map(\.runID) == [runID, runID])
            #expect(events[0].old == verified)
            #expect(events[0].new == grace)
            #expect(events[0].entitlementBefore == "expired")
            #expect(events[0].entitlementAfter == "grace_period")
            #expect(events[0].appleStatus == 0)
            #expect(events[1].old == .unverified)
            let raw = try await db.webService.read { d in try String.fetchOne(d, sql: "SELECT old_values FROM subscription_events WHERE reason = 'first_verified'") }
            #expect(raw == #"{"auto_renew_product_id":null,"auto_renew_status":null,"cancelled_at":null,"environment":null,"expiration_intent":null,"expires_at":null,"grace_period_expires_at":null,"is_in_billing_retry":false,"original_transaction_id":null,"product_id":null}"#)
        }
    }

    @Test func enrolAndLookUpByUser() async throws {
        try await withTemporaryDatabase { db in
            let id = try await db.store.enroll(userID: "u-42", receipt: "RECEIPT")
            #expect(try await db.store.subscriptions(userID: "u-42") == [SubscriptionRow(id: id, userID: "u-42", latestReceipt: "RECEIPT", state: .unverified)])
        }
    }
}
