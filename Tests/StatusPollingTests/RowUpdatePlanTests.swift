import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The one planner every writer applies: each rule on its own, with no database.
@Suite struct RowUpdatePlanTests {
    let t0 = AppleJSON.t0
    let day = AppleJSON.day

    func state(_ otid: String?, expires days: Int64 = 30) -> SubscriptionState {
        guard let otid else { return .unverified }
        return SubscriptionState(
            originalTransactionID: otid, productID: "premium.monthly", environment: "Production",
            expiresAt: t0 + days * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
    }

    func verified(
        _ new: SubscriptionState, others: [SubscriptionState] = [], sent: String = "R", run: Int64? = 7, provenance: Provenance? = nil, appleStateAt: Int64? = nil
    ) -> ResultBatch.Result {
        .verified(.init(
            subscriptionID: 1, runID: run, provenance: provenance, receiptSent: sent, state: new, otherChains: others, latestReceipt: "R2",
            upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0, appleStateAtMs: appleStateAt))
    }

    func row(_ current: SubscriptionState, receipt: String = "R", lease: Int64? = nil, appleStateAt: Int64? = nil) -> RowUpdatePlan.LockedRow {
        .init(userID: "u", holdsReceiptSent: receipt == "R", state: current, appleStateAtMs: appleStateAt, leaseRun: lease)
    }

    /// Newer Apple data wins: an answer whose data is older than the row's changes nothing and
    /// says so in the trail; the same instant or later is written.
    @Test func anAnswerOlderThanTheRowsAppleDataIsStale() {
        let held = state("A", expires: 60), older = state("A", expires: 30)
        let stale = RowUpdatePlan(verified(older, appleStateAt: t0 - 1), current: row(held, appleStateAt: t0), ownerOf: { _ in nil })
        #expect(stale.columns == .untouched)
        #expect(stale.events == [.init(reason: .stale, old: held, new: older)])
        #expect(stale.result == .stale && stale.isWritten)
        let same = RowUpdatePlan(verified(held, appleStateAt: t0), current: row(held, appleStateAt: t0), ownerOf: { _ in nil })
        #expect(same.result == .written(previous: held))
        let never = RowUpdatePlan(verified(older), current: row(held), ownerOf: { _ in nil })
        #expect(never.columns == .verified(older, latestReceipt: "R2", status: .verifyReceipt(.valid), appleStateAtMs: t0))
    }

    @Test func theTrailSaysWhoBroughtTheAnswer() {
        let backfill = RowUpdatePlan(verified(state("A"), provenance: .backfill(runID: 3)), current: row(.unverified), ownerOf: { _ in nil })
        #expect(backfill.provenance.source == "backfill" && backfill.runID == 3 && backfill.provenance.notificationID == nil)
        let pushed = Provenance.notification(notificationUUID: "n-1", type: "DID_RENEW", signedAtMs: t0)
        let notified = RowUpdatePlan(verified(state("A"), run: nil, provenance: pushed), current: row(.unverified, lease: 4), ownerOf: { _ in nil })
        #expect(notified.provenance.source == "notification" && notified.runID == nil && notified.provenance.notificationID == "n-1")
        #expect(RowUpdatePlan(verified(state("A")), current: row(.unverified), ownerOf: { _ in nil }).provenance == .poll(runID: 7))
    }

    @Test func aRenewalWritesTheColumnsAndOneTransitionEvent() {
        let old = state("A"), new = state("A", expires: 60)
        let plan = RowUpdatePlan(verified(new), current: row(old), ownerOf: { _ in nil })
        #expect(plan.columns == .verified(new, latestReceipt: "R2", status: .verifyReceipt(.valid), appleStateAtMs: t0))
        #expect(plan.events == [.init(reason: .transition(.renewed), old: old, new: new)])
        #expect(plan.result == .written(previous: old))
        #expect(plan.isWritten)
        #expect(plan.runID == 7 && plan.atMs == t0 && plan.userID == "u")
    }

    @Test func anUnchangedAnswerWritesBookkeepingButNoEvent() {
        let plan = RowUpdatePlan(verified(state("A")), current: row(state("A")), ownerOf: { _ in nil })
        #expect(plan.columns == .verified(state("A"), latestReceipt: "R2", status: .verifyReceipt(.valid), appleStateAtMs: t0))
        #expect(plan.events.isEmpty)
        #expect(plan.result == .written(previous: state("A")))
    }

    @Test func aDeletedRowAReplacedReceiptAndAnotherRunsLeaseWriteNothing() {
        let missing = RowUpdatePlan(verified(state("A")), current: nil, ownerOf: { _ in nil })
        #expect(missing.columns == .untouched && missing.result == .missing && !missing.isWritten && missing.events.isEmpty)
        let replaced = RowUpdatePlan(verified(state("A")), current: row(.unverified, receipt: "NEW"), ownerOf: { _ in nil })
        #expect(replaced.columns == .untouched && replaced.result == .superseded && replaced.isWritten)
        let leased = RowUpdatePlan(verified(state("A")), current: row(.unverified, lease: 8), ownerOf: { _ in nil })
        #expect(leased.columns == .untouched && leased.result == .superseded && !leased.isWritten)
        let ownLease = RowUpdatePlan(verified(state("A")), current: row(.unverified, lease: 7), ownerOf: { _ in nil })
        #expect(ownLease.result == .written(previous: .unverified) && ownLease.isWritten)
    }

    @Test func aChainOwnedByAnotherRowIsAConflictThatGrantsNothing() {
        let plan = RowUpdatePlan(verified(state("A")), current: row(.unverified), ownerOf: { $0 == "A" ? 5 : nil })
        #expect(plan.columns == .failure(VerificationFailure(.conflict, "original_transaction_id A belongs to subscription 5", upstreamStatus: .verifyReceipt(.valid))))
        #expect(plan.events == [.init(reason: .conflict, old: .unverified, new: .unverified)])
        #expect(plan.result == .conflict(owner: 5))
        #expect(plan.discovered.isEmpty)
    }

    @Test func aNewRowAdoptsTheFirstUnownedChainAndEnrolsTheOthers() {
        let plan = RowUpdatePlan(verified(state("A"), others: [state("B"), state("C")]), current: row(.unverified), ownerOf: { $0 == "A" ? 5 : nil })
        #expect(plan.columns == .verified(state("B"), latestReceipt: "R2", status: .verifyReceipt(.valid), appleStateAtMs: t0))
        #expect(plan.events == [.init(reason: .transition(.firstVerified), old: .unverified, new: state("B"))])
        #expect(plan.discovered == [state("C")])
        #expect(plan.discoveredReceipt == "R2")
        #expect(plan.result == .written(previous: .unverified, adopted: state("B"), discovered: 1))
        // The row's own id is never an owner that stands in its way.
        let own = RowUpdatePlan(verified(state("A")), current: row(.unverified), ownerOf: { _ in 1 })
        #expect(own.result == .written(previous: .unverified))
    }

    @Test func aFailureTouchesBookkeepingOnlyAndNothingOnAGoneRow() {
        let failure = VerificationFailure(.timeout, "slow", isTransient: true)
        let failed = ResultBatch.Result.failed(.init(subscriptionID: 1, runID: 7, failure: failure, attemptedAtMs: t0 + 5))
        let plan = RowUpdatePlan(failed, current: row(state("A")), ownerOf: { _ in nil })
        #expect(plan.columns == .failure(failure) && plan.events.isEmpty && plan.result == nil && plan.isWritten && plan.atMs == t0 + 5)
        let gone = RowUpdatePlan(failed, current: nil, ownerOf: { _ in nil })
        #expect(gone.columns == .untouched && !gone.isWritten)
        let leased = RowUpdatePlan(failed, current: row(state("A"), lease: 9), ownerOf: { _ in nil })
        #expect(leased.columns == .untouched && !leased.isWritten)
    }

    @Test(arguments: ["renewed", "first_verified", "conflict", "discovered", "stale", "other_change"])
    func auditReasonsReadBackFromTheirRawValues(raw: String) {
        #expect(AuditReason(rawValue: raw)?.rawValue == raw)
        #expect(AuditReason(rawValue: "no such reason") == nil)
    }
}
