import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The store contract, one set of tests run against every store (SQLite, and PostgreSQL when the
/// test script started one): the `entitlements` view, the selection, writes that never touch a
/// contract column on failure, superseded receipts, conflicts, the upload trigger, the audit trail.
@Suite struct StoreContractTests {
    let t0 = AppleJSON.t0
    let day = AppleJSON.day
    let hour = AppleJSON.hour

    var verified: SubscriptionState {
        SubscriptionState(
            originalTransactionID: "1000000001", productID: "premium.monthly", environment: "Production",
            expiresAt: t0 + 30 * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
    }

    @Test(arguments: StoreKind.available) func entitlementsViewAgreesWithTheDecisionsStates(kind: StoreKind) async throws {
        try await withStore(kind) { db in
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
                let id = try await db.insert(userID: "u\(index)", receipt: "r\(index)", state)
                let row = try await db.row("SELECT state, is_entitled FROM entitlements WHERE subscription_id = \(id)")
                #expect(row?["state"] == expected.rawValue)
                #expect(row?["is_entitled"] == (expected.isEntitled ? "1" : "0"))
                #expect(state.entitlement(at: now) == expected)
            }
        }
    }

    @Test(arguments: StoreKind.available) func selectionTakesOnlyRowsWhoseAccessMayChange(kind: StoreKind) async throws {
        try await withStore(kind) { db in
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
            add("billing retry 60 days past expiry", { $0.expiresAt = now - 60 * day; $0.isInBillingRetry = true }, due: true)
            add("billing retry 61 days past expiry (Apple's end, not heard yet)", { $0.expiresAt = now - 61 * day; $0.isInBillingRetry = true }, due: true)
            add("billing retry 67 days past expiry", { $0.expiresAt = now - 67 * day; $0.isInBillingRetry = true }, due: true)
            add("billing retry 68 days past expiry", { $0.expiresAt = now - 68 * day; $0.isInBillingRetry = true }, due: false)
            add("billing retry 400 days past expiry", { $0.expiresAt = now - 400 * day; $0.isInBillingRetry = true }, due: false)
            add("expired 61 days ago, retry over", { $0.expiresAt = now - 61 * day; $0.expirationIntent = 2 }, due: false)
            add("in grace", { $0.expiresAt = now - 5 * day; $0.gracePeriodExpiresAt = now + 5 * day }, due: true)
            add("grace ended 23h ago", { $0.expiresAt = now - 16 * day; $0.gracePeriodExpiresAt = now - 23 * hour }, due: true)
            add("grace ended 25h ago", { $0.expiresAt = now - 16 * day; $0.gracePeriodExpiresAt = now - 25 * hour }, due: false)
            add("refunded long ago", { $0.expiresAt = now - 90 * day; $0.cancelledAt = now - 95 * day }, due: false)
            // The lapsed sweep (every 7 days, within 180): tonight (00:00 UTC) takes the rows that
            // expired on the UTC days 7, 14, … 175 days before tonight's.
            let lapsedDue = [
                "lapsed 7 days ago, its turn", "lapsed 6 days ago, the last ms of its turn's day", "lapsed 14 days ago, its second turn",
                "lapsed 175 days ago", "refunded and lapsed 7 days ago",
            ]
            add(lapsedDue[0], { $0.expiresAt = now - 7 * day; $0.expirationIntent = 1 }, due: true)
            add("lapsed 7 days ago and 1 ms, the day before its turn's", { $0.expiresAt = now - 7 * day - 1; $0.expirationIntent = 1 }, due: false)
            add(lapsedDue[1], { $0.expiresAt = now - 6 * day - 1; $0.expirationIntent = 1 }, due: true)
            add("lapsed 6 days ago", { $0.expiresAt = now - 6 * day; $0.expirationIntent = 1 }, due: false)
            add(lapsedDue[2], { $0.expiresAt = now - 14 * day; $0.expirationIntent = 1 }, due: true)
            add(lapsedDue[3], { $0.expiresAt = now - 175 * day; $0.expirationIntent = 1 }, due: true)
            add("lapsed 182 days ago, past the sweep", { $0.expiresAt = now - 182 * day; $0.expirationIntent = 1 }, due: false)
            add(lapsedDue[4], { $0.expiresAt = now - 7 * day; $0.cancelledAt = now - 20 * day }, due: true)
            add("billing retry 70 days past expiry (retry rows are not swept)", { $0.expiresAt = now - 70 * day; $0.isInBillingRetry = true }, due: false)
            var expectedIDs: [Int64] = []
            for (name, state, due) in rows {
                let id = try await db.insert(userID: name, receipt: "receipt of \(name)", state)
                if due { expectedIDs.append(id) }
                #expect(SelectionWindows().bounds(nowMs: now).selects(state) == due, "\(name)")
            }
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: now, after: 0) == expectedIDs)
            // Narrower windows are honoured.
            let narrow = SelectionWindows(nearExpiryBefore: .seconds(0), nearExpiryAfter: .seconds(0))
            let narrowRows = try await db.store.subscriptions(ids: try await db.store.dueSubscriptionIDs(.nightly(narrow), nowMs: now, after: 0))
            let narrowIDs = narrowRows.map(\.userID)
            #expect(narrowIDs == [
                "unverified", "billing retry 59 days past expiry", "billing retry 60 days past expiry",
                "billing retry 61 days past expiry (Apple's end, not heard yet)", "billing retry 67 days past expiry", "in grace", "grace ended 23h ago",
            ] + lapsedDue)
            // `--lapsed-every 0`: no sweep.
            var noSweep = SelectionWindows()
            noSweep.lapsed = nil
            let expectedWithoutSweep = rows.filter { $0.2 && !lapsedDue.contains($0.0) }.map(\.0)
            #expect(try await db.store.subscriptions(ids: try await db.store.dueSubscriptionIDs(.nightly(noSweep), nowMs: now, after: 0)).map(\.userID) == expectedWithoutSweep)
        }
    }

    /// A receipt lists every chain of its user: when the web service uploads one to a row, the
    /// user's other rows (another group's chain, enrolled as `discovered`) are asked that night too,
    /// and no one else's.
    @Test(arguments: StoreKind.available) func anUploadMakesEveryRowOfItsUserDue(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let now = t0 + 100 * day
            var far = verified
            far.expiresAt = now + 20 * day
            for (index, user) in ["family", "family", "neighbour"].enumerated() {
                far.originalTransactionID = "otid-\(index)"
                try await db.insert(userID: user, receipt: "receipt \(index)", far)
            }
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: now, after: 0) == [])
            try await db.execute("UPDATE subscriptions SET latest_receipt = 'a new receipt' WHERE id = 1")
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: now, after: 0) == [1, 2])
        }
    }

    /// `--fresh-within`: a row in a window whose Apple data was recorded recently (a notification,
    /// an earlier run) is skipped and counted, unless a receipt was uploaded since or a moment
    /// Apple acts on (its expiry, its grace period's end) passed since. The store's SQL and the
    /// Swift rule agree row by row.
    @Test(arguments: StoreKind.available) func rowsWithFreshAppleDataAreSkippedAndCounted(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let now = t0 + 100 * day
            // (name, state, apple_state_at, uploaded, fresh)
            var rows: [(String, SubscriptionState, Int64?, Bool, Bool)] = []
            func add(_ name: String, recorded: Int64?, uploaded: Bool = false, fresh: Bool, _ change: (inout SubscriptionState) -> Void) {
                var state = verified
                state.originalTransactionID = "otid-\(rows.count)"
                change(&state)
                rows.append((name, state, recorded, uploaded, fresh))
            }
            let nearExpiry: (inout SubscriptionState) -> Void = { $0.expiresAt = now + 5 * hour }
            add("renewed by a notification an hour ago", recorded: now - hour, fresh: true, nearExpiry)
            add("recorded 11 h 59 m ago", recorded: now - 12 * hour + 60_000, fresh: true, nearExpiry)
            add("recorded 12 h ago exactly", recorded: now - 12 * hour, fresh: true, nearExpiry)
            add("recorded 12 h and 1 ms ago", recorded: now - 12 * hour - 1, fresh: false, nearExpiry)
            add("never recorded (before apple_state_at)", recorded: nil, fresh: false, nearExpiry)
            add("a receipt uploaded since", recorded: now - hour, uploaded: true, fresh: false, nearExpiry)
            add("expired since it was recorded", recorded: now - 3 * hour, fresh: false) { $0.expiresAt = now - 2 * hour }
            add("expired before it was recorded", recorded: now - hour, fresh: true) { $0.expiresAt = now - 2 * hour; $0.expirationIntent = 1 }
            add("expires this very ms", recorded: now - hour, fresh: false) { $0.expiresAt = now }
            add("in billing retry, told an hour ago", recorded: now - hour, fresh: true) { $0.expiresAt = now - 3 * day; $0.isInBillingRetry = true }
            add("grace period ended since it was recorded", recorded: now - 3 * hour, fresh: false) {
                $0.expiresAt = now - 10 * day; $0.isInBillingRetry = true; $0.gracePeriodExpiresAt = now - hour
            }
            add("in grace, told an hour ago", recorded: now - hour, fresh: true) {
                $0.expiresAt = now - 3 * day; $0.isInBillingRetry = true; $0.gracePeriodExpiresAt = now + 3 * day
            }
            let windows = SelectionWindows()
            var expectedIDs: [Int64] = []
            for (name, state, recorded, uploaded, fresh) in rows {
                let id = try await db.insert(userID: name, receipt: "receipt of \(name)", state)
                try await db.execute("UPDATE subscriptions SET apple_state_at = \(recorded.map(String.init) ?? "NULL"), receipt_uploaded = \(uploaded ? 1 : 0) WHERE id = \(id)")
                #expect(windows.bounds(nowMs: now).selects(state, receiptUploaded: uploaded), "\(name): in a window")
                #expect(windows.bounds(nowMs: now).isFresh(state, receiptUploaded: uploaded, appleStateAtMs: recorded) == fresh, "\(name)")
                #expect(windows.bounds(nowMs: now).selects(state, receiptUploaded: uploaded, appleStateAtMs: recorded) == !fresh, "\(name)")
                if !fresh { expectedIDs.append(id) }
            }
            let due = try await db.store.dueSelection(.nightly(windows), nowMs: now, after: 0)
            #expect(due == DueSelection(ids: expectedIDs, skippedFresh: 6))
            // `--fresh-within 0`: every row in a window.
            #expect(try await db.store.dueSelection(.nightly(SelectionWindows(freshWithin: nil)), nowMs: now, after: 0) == DueSelection(ids: Array(1...12)))
            // A shorter `--fresh-within 2h`: only the four recorded an hour ago, not uploaded, are fresh.
            let short = SelectionWindows(freshWithin: .seconds(2 * 3600))
            #expect(try await db.store.dueSelection(.nightly(short), nowMs: now, after: 0).skippedFresh == 4)
            // Apple's history read without a gap for Production since 13 hours ago: the rows recorded
            // 12 h and 1 ms ago are fresh too, unless an expiry passed since; Sandbox is not covered.
            var covered = SelectionWindows()
            covered.coveredFrom = ["Production": now - 13 * hour]
            #expect(covered.bounds(nowMs: now).isFresh(rows[3].1, receiptUploaded: false, appleStateAtMs: rows[3].2))
            #expect(try await db.store.dueSelection(.nightly(covered), nowMs: now, after: 0).skippedFresh == 7)
            try await db.execute("UPDATE subscriptions SET environment = 'Sandbox' WHERE id = 4")
            #expect(try await db.store.dueSelection(.nightly(covered), nowMs: now, after: 0).skippedFresh == 6)
        }
    }

    @Test(arguments: StoreKind.available) func selectionResumesAfterACursorAndReadsRowsByID(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            for index in 0..<25 { try await db.insert(userID: "u\(index)", receipt: "r\(index)") }
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: t0, after: 0) == Array(1...25))
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: t0, after: 18) == Array(19...25))
            try await db.execute("DELETE FROM subscriptions WHERE id = 3")
            let rows = try await db.store.subscriptions(ids: [5, 3, 1, 2])
            #expect(rows.map(\.id) == [1, 2, 5])
            #expect(rows.map(\.userID) == ["u0", "u1", "u4"])
            #expect(rows.map(\.latestReceipt) == ["r0", "r1", "r4"])
            #expect(try await db.store.subscriptions(ids: []).isEmpty)
        }
    }

    @Test(arguments: StoreKind.available) func failureTouchesBookkeepingOnly(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "u1", receipt: "R1", verified)
            let before = try await db.contractColumns(id)
            let failure = VerificationFailure(.appleStatus, "Apple answered status 21003", upstreamStatus: .verifyReceipt(.notAuthenticated))
            try await db.store.recordFailure(.init(subscriptionID: id, failure: failure, attemptedAtMs: t0))
            try await db.store.recordFailure(.init(subscriptionID: id, failure: failure, attemptedAtMs: t0 + 1))
            #expect(try await db.contractColumns(id) == before)
            let row = try #require(try await db.rawRow(id))
            #expect(row["latest_receipt"] == "R1")
            #expect(row["last_attempt_at"] == "\(t0 + 1)")
            #expect(row["last_apple_status"] == "21003")
            #expect(row["last_error_reason"] == "apple_status")
            #expect(row["last_error"] == "Apple answered status 21003")
            #expect(row["consecutive_failures"] == "2")
            #expect(row["last_verified_at"] == nil)
        }
    }

    @Test(arguments: StoreKind.available) func verifiedWriteReplacesContractColumnsAndReceipt(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "u1", receipt: "R1")
            try await db.store.recordFailure(.init(subscriptionID: id, failure: .init(.timeout, "slow"), attemptedAtMs: t0))
            let result = try await db.store.recordVerified(.init(subscriptionID: id, receiptSent: "R1", state: verified, latestReceipt: "R1-NEW", upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0 + 5))
            #expect(result == .written(previous: .unverified))
            let row = try #require(try await db.store.subscription(id: id))
            #expect(row.state == verified)
            #expect(row.latestReceipt == "R1-NEW")
            let raw = try #require(try await db.rawRow(id))
            #expect(raw["consecutive_failures"] == "0")
            #expect(raw["last_error_reason"] == nil)
            #expect(raw["last_verified_at"] == "\(t0 + 5)")
            // Without a new latest_receipt the stored one stays.
            var renewed = verified
            renewed.expiresAt = t0 + 60 * day
            #expect(try await db.store.recordVerified(.init(subscriptionID: id, receiptSent: "R1-NEW", state: renewed, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0 + 6)) == .written(previous: verified))
            #expect(try await db.store.subscription(id: id)?.latestReceipt == "R1-NEW")
            #expect(try await db.store.subscription(id: id)?.state == renewed)
        }
    }

    @Test(arguments: StoreKind.available) func replacedReceiptSupersedesTheAnswer(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "u1", receipt: "R1", verified)
            try await db.execute("UPDATE subscriptions SET latest_receipt = 'R2' WHERE id = \(id)")
            let before = try await db.contractColumns(id)
            var renewed = verified
            renewed.expiresAt = t0 + 60 * day
            let result = try await db.store.recordVerified(.init(subscriptionID: id, receiptSent: "R1", state: renewed, latestReceipt: "R1-NEW", upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))
            #expect(result == .superseded)
            #expect(try await db.contractColumns(id) == before)
            #expect(try await db.rawRow(id)?["latest_receipt"] == "R2")
            #expect(try await db.store.recordVerified(.init(subscriptionID: 999, receiptSent: "R1", state: renewed, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0)) == .missing)
        }
    }

    @Test(arguments: StoreKind.available) func chainOwnedByAnotherRowIsAConflictAndGrantsNothing(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let owner = try await db.insert(userID: "alice", receipt: "R-alice", verified)
            let replayer = try await db.insert(userID: "mallory", receipt: "R-alice-copy")
            let before = try await db.contractColumns(replayer)
            let result = try await db.store.recordVerified(.init(subscriptionID: replayer, receiptSent: "R-alice-copy", state: verified, latestReceipt: "R-new", upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))
            #expect(result == .conflict(owner: owner))
            #expect(try await db.contractColumns(replayer) == before)
            let raw = try #require(try await db.rawRow(replayer))
            #expect(raw["latest_receipt"] == "R-alice-copy")
            #expect(raw["last_error_reason"] == "conflict")
            #expect(raw["last_error"] == "original_transaction_id 1000000001 belongs to subscription \(owner)")
            #expect(try await db.store.subscriptionID(owning: "1000000001") == owner)
        }
    }

    @Test(arguments: StoreKind.available) func anUploadedReceiptMakesALapsedRowDueUntilVerified(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let now = t0 + 200 * day
            let id = try await db.insert(userID: "lapsed", receipt: "R-old", verified)
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
            #expect(try await db.rawRow(id)?["receipt_uploaded"] == "0")
            #expect(try await db.store.dueSubscriptionIDs(.nightly(SelectionWindows()), nowMs: now, after: 0).isEmpty)
            // A failure leaves it due.
            try await db.store.uploadReceipt(subscriptionID: id, receipt: "R-again")
            try await db.store.recordFailure(.init(subscriptionID: id, failure: .init(.timeout, "slow"), attemptedAtMs: now + 1))
            #expect(try await db.rawRow(id)?["receipt_uploaded"] == "1")
        }
    }

    @Test(arguments: StoreKind.available) func walksEveryRowWithItsBookkeeping(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let a = try await db.insert(userID: "a", receipt: "Ra", verified)
            let b = try await db.insert(userID: "b", receipt: "Rb")
            try await db.store.recordFailure(.init(subscriptionID: b, failure: .init(.appleStatus, "Apple answered status 21003", upstreamStatus: .verifyReceipt(.notAuthenticated)), attemptedAtMs: t0))
            let page = try await db.store.subscriptionsWithBookkeeping(after: 0, limit: 10)
            #expect(page.map(\.0.id) == [a, b])
            #expect(page[0].1 == SubscriptionBookkeeping())
            #expect(page[1].1 == SubscriptionBookkeeping(lastAttemptAt: t0, lastAppleStatus: 21003, lastErrorReason: "apple_status", lastError: "Apple answered status 21003", consecutiveFailures: 1))
            #expect(try await db.store.subscriptionsWithBookkeeping(after: b, limit: 10).isEmpty)
        }
    }

    @Test(arguments: StoreKind.available) func enrolAndLookUpByUser(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.store.enroll(userID: "u-42", receipt: "RECEIPT")
            #expect(try await db.store.subscriptions(userID: "u-42") == [SubscriptionRow(id: id, userID: "u-42", latestReceipt: "RECEIPT", state: .unverified)])
        }
    }
}
