import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The store contract's audit trail and run history, on every store: who brought each answer, one
/// audit row per change in the change's transaction, the report's reading of the trail, and the
/// build that ran each run.
extension StoreContractTests {
    /// Newer Apple data wins, whoever brings it: once a row holds data true at a later instant
    /// (a notification signed after the run asked), the run's older answer changes no column and
    /// leaves a `stale` audit row; the trail names who brought each answer.
    @Test(arguments: StoreKind.available) func anOlderAnswerIsStaleAndTheTrailSaysWhoBroughtEach(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "u1", receipt: "R1")
            let backfill = try await db.store.startRun(RunStart(mode: .backfill, nowMs: t0, startedAtMs: t0, host: "h", pid: 1, options: [:]))
            let night = try await db.store.startRun(RunStart(mode: .nightly, nowMs: t0, startedAtMs: t0, host: "h", pid: 1, options: [:]))
            var renewed = verified
            renewed.expiresAt = t0 + 60 * day
            let pushed = Provenance.notification(notificationUUID: "6f1c-uuid", type: "DID_RENEW", signedAtMs: t0 + 10)
            let first = try await db.store.recordVerified(.init(
                subscriptionID: id, provenance: pushed, receiptSent: "R1", state: renewed, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid),
                verifiedAtMs: t0 + 20, appleStateAtMs: t0 + 10))
            #expect(first == .written(previous: .unverified))
            let older = try await db.store.recordVerified(.init(
                subscriptionID: id, provenance: .backfill(runID: backfill), receiptSent: "R1", state: verified, latestReceipt: "R-older", upstreamStatus: .verifyReceipt(.valid),
                verifiedAtMs: t0 + 30, appleStateAtMs: t0 + 5))
            #expect(older == .stale)
            #expect(try await db.store.subscriptions(ids: [id]).first?.state == renewed)
            #expect(try await db.row("SELECT latest_receipt, apple_state_at, last_verified_at FROM subscriptions WHERE id = \(id)") == [
                "latest_receipt": "R1", "apple_state_at": "\(t0 + 10)", "last_verified_at": "\(t0 + 20)",
            ])
            let events = try await db.store.history(userID: "u1")
            #expect(events.map(\.reason) == ["stale", "first_verified"])
            #expect(events.map(\.source) == ["backfill", "notification"])
            #expect(events.map(\.notificationID) == [nil, "6f1c-uuid"])
            #expect(events.map(\.runID) == [backfill, nil])
            #expect(events[0].old == renewed && events[0].new == verified)
            // The same instant, or later, is written.
            let newer = try await db.store.recordVerified(.init(
                subscriptionID: id, runID: night, receiptSent: "R1", state: verified, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0 + 40))
            #expect(newer == .written(previous: renewed))
            #expect(try await db.store.history(userID: "u1").first?.source == "poll")
            // The report's reading: who brought each change, and a notification's signed instant
            // from its stored row (the receiver writes both in one transaction).
            try await db.execute("""
                INSERT INTO app_store_notifications (notification_id, version, type, signed_at, apple_state_at, environment, source, received_at, outcome, subscription_id)
                VALUES ('6f1c-uuid', 2, 'DID_RENEW', \(t0 + 10), \(t0 + 10), 'Production', 'push', \(t0 + 20), 'applied', \(id))
                """)
            let trail = try await db.store.trailEvents(in: 0..<1_000)
            #expect(trail.map(\.reason) == ["first_verified", "stale", "other_change"])
            #expect(trail.map(\.source) == ["notification", "backfill", "poll"])
            #expect(trail.map(\.notifiedAtMs) == [t0 + 10, nil, nil])
            #expect(trail[0].atMs == t0 + 20)
        }
    }

    @Test(arguments: StoreKind.available) func everyContractChangeWritesOneAuditEventInTheSameTransaction(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "u1", receipt: "R1")
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
            // The report's reading: the trail in id order, a page at a time, the columns decoded.
            let ids = try #require(try await db.store.trailEventIDs())
            #expect(ids.count == 2)
            let first = try await db.store.trailEvents(in: ids.lowerBound..<ids.lowerBound + 1)
            #expect(first.map(\.reason) == ["first_verified"])
            #expect(first.first?.subscriptionID == id)
            #expect(first.first?.atMs == t0)
            let rest = try await db.store.trailEvents(in: ids.lowerBound + 1..<ids.upperBound + 10)
            #expect(rest.map(\.reason) == ["entered_grace"])
            #expect(rest.first?.new == TrailState(grace))
            #expect(rest.first?.environment == "Production")
            #expect(rest.first?.source == "poll")
            #expect(rest.first?.notifiedAtMs == nil)
            #expect(first.first?.new.isVerified == true)
            #expect(try await db.store.trailEvents(in: ids.upperBound + 1..<ids.upperBound + 10).isEmpty)
            let raw = try await db.row("SELECT old_values FROM subscription_events WHERE reason = 'first_verified'")?["old_values"]
            #expect(raw == #"{"is_in_billing_retry":false}"#)
        }
    }

    /// Each audit row keeps the columns the report reads beside its JSON (SQLite v22, PostgreSQL
    /// v20), and the report reads a row written before them out of its JSON alike: a page mixing
    /// both comes back in id order, event for event the same.
    @Test(arguments: StoreKind.available) func theReportReadsAnAuditRowsColumnsAndAnOlderRowsJSONAlike(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "u1", receipt: "R1")
            var grace = verified
            grace.isInBillingRetry = true
            grace.gracePeriodExpiresAt = t0 + 46 * day
            grace.expirationIntent = 2
            grace.autoRenewStatus = nil
            var refunded = verified
            refunded.cancelledAt = t0 + 50 * day
            refunded.autoRenewStatus = false
            for (index, state) in [verified, grace, refunded, verified].enumerated() {
                _ = try await db.store.recordVerified(.init(
                    subscriptionID: id, receiptSent: "R1", state: state, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid),
                    verifiedAtMs: t0 + Int64(index) * day))
            }
            let columns = try await db.rows("""
                SELECT environment, verified, expires_at, grace_period_expires_at, is_in_billing_retry, auto_renew_status, expiration_intent, cancelled_at
                FROM subscription_events ORDER BY id
                """)
            let base = ["environment": "Production", "verified": "1", "expires_at": "\(t0 + 30 * day)", "is_in_billing_retry": "0"]
            #expect(columns == [
                base.merging(["auto_renew_status": "1"]) { $1 },
                base.merging(["grace_period_expires_at": "\(t0 + 46 * day)", "is_in_billing_retry": "1", "expiration_intent": "2"]) { $1 },
                base.merging(["auto_renew_status": "0", "cancelled_at": "\(t0 + 50 * day)"]) { $1 },
                base.merging(["auto_renew_status": "1"]) { $1 },
            ])
            let ids = try #require(try await db.store.trailEventIDs())
            let kept = try await db.store.trailEvents(in: ids.lowerBound..<ids.upperBound + 1)
            #expect(kept.map(\.new) == [verified, grace, refunded, verified].map(TrailState.init))
            #expect(kept.map(\.environment) == Array(repeating: "Production", count: 4))
            // Rows written before v22 / v20 have no report columns: every other one read out of its JSON.
            try await db.execute("""
                UPDATE subscription_events SET environment = NULL, verified = NULL, expires_at = NULL, is_in_billing_retry = NULL,
                    auto_renew_status = NULL WHERE id = \(ids.lowerBound) OR id = \(ids.lowerBound + 2)
                """)
            let mixed = try await db.store.trailEvents(in: ids.lowerBound..<ids.upperBound + 1)
            #expect(mixed == kept)
            #expect(mixed.map(\.id) == Array(ids))
        }
    }

    /// A snapshot leaves out the null columns: a column the change cleared is a key in
    /// `old_values` that `new_values` lacks, and the database's JSON readers see NULL for it, as
    /// the history's decoder does.
    @Test(arguments: StoreKind.available) func aClearedColumnIsAKeyTheNewValuesLack(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let id = try await db.insert(userID: "u1", receipt: "R1")
            var grace = verified
            grace.isInBillingRetry = true
            grace.gracePeriodExpiresAt = t0 + 46 * day
            _ = try await db.store.recordVerified(.init(subscriptionID: id, receiptSent: "R1", state: grace, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))
            var recovered = verified
            recovered.expiresAt = t0 + 60 * day
            _ = try await db.store.recordVerified(.init(subscriptionID: id, receiptSent: "R1", state: recovered, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0 + day))
            let extract = kind == .postgres
                ? "old_values::jsonb->>'grace_period_expires_at' AS old, new_values::jsonb->>'grace_period_expires_at' AS new, CASE WHEN new_values::jsonb ? 'grace_period_expires_at' THEN 1 ELSE 0 END AS present"
                : "json_extract(old_values, '$.grace_period_expires_at') AS old, json_extract(new_values, '$.grace_period_expires_at') AS new, CASE WHEN json_type(new_values, '$.grace_period_expires_at') IS NULL THEN 0 ELSE 1 END AS present"
            let row = try await db.row("SELECT \(extract) FROM subscription_events WHERE reason <> 'first_verified'")
            #expect(row?["old"] == "\(t0 + 46 * day)")
            #expect(row?["new"] == nil)
            #expect(row?["present"] == "0")
            let events = try await db.store.history(userID: "u1")
            #expect(events.map(\.old) == [grace, .unverified])
            #expect(events.map(\.new) == [recovered, grace])
        }
    }

    @Test(arguments: StoreKind.available) func eachRunNamesTheBuildThatRanIt(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let build = "0.9.0 (commit 1a2b3c4, built 2026-11-26T05:00:00Z)"
            let id = try await db.store.startRun(RunStart(mode: .nightly, nowMs: t0, startedAtMs: t0, host: "h", pid: 1, options: [:], version: build))
            let unnamed = try await db.store.startRun(RunStart(mode: .nightly, nowMs: t0, startedAtMs: t0, host: "h", pid: 1, options: [:]))
            #expect(try await db.store.runs(last: 2).map(\.version) == [nil, build])
            #expect(try await db.row("SELECT version FROM poll_runs WHERE id = \(id)") == ["version": build])
            #expect(try await db.row("SELECT version FROM poll_runs WHERE id = \(unnamed)") == [:])
        }
    }
}
