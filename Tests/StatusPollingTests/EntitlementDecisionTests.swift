import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The pure decision, case by case, from Apple-shaped JSON (strings everywhere, three date forms).
@Suite struct EntitlementDecisionTests {
    typealias T = AppleJSON.Transaction
    typealias R = AppleJSON.Renewal
    let t0 = AppleJSON.t0
    let day = AppleJSON.day

    func response(_ json: String) throws -> VerifyReceiptResponse {
        try VerifyReceiptResponse(json: Data(json.utf8))
    }

    func row(_ state: SubscriptionState = .unverified) -> SubscriptionRow {
        SubscriptionRow(id: 7, userID: "user-7", latestReceipt: "OLD-RECEIPT", state: state)
    }

    func decide(_ json: String, _ row: SubscriptionRow, nowMs: Int64? = nil) throws -> EntitlementDecision.Outcome {
        EntitlementDecision.decide(answer: try response(json).statusAnswer, row: row, bundleID: AppleJSON.bundleID, nowMs: nowMs)
    }

    /// A verified monthly subscriber, renewing automatically, expiring at t0 + 30 days: the
    /// default transaction of `AppleJSON.Transaction`.
    var verifiedMonthly: SubscriptionState {
        SubscriptionState(
            originalTransactionID: "1000000001", productID: "premium.monthly", environment: "Production",
            expiresAt: t0 + 30 * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly",
            transactionID: "2000000001", purchasedAt: t0, ownershipType: "PURCHASED")
    }

    @Test func newEnrolmentAdoptsTheChain() throws {
        let json = AppleJSON.valid(transactions: [T()], renewals: [R()])
        #expect(try decide(json, row()) == .adopt(verifiedMonthly, latestReceipt: "UPDATED-RECEIPT"))
    }

    @Test(arguments: [false, true])
    func renewalPicksTheGreatestExpiryWhateverTheOrder(newestFirst: Bool) throws {
        let old = T(transactionID: "2000000001", purchaseMs: t0, expiresMs: t0 + 30 * day)
        let new = T(transactionID: "2000000002", purchaseMs: t0 + 30 * day, expiresMs: t0 + 60 * day)
        let json = AppleJSON.valid(transactions: newestFirst ? [new, old] : [old, new], renewals: [R()])
        var expected = verifiedMonthly
        expected.expiresAt = t0 + 60 * day
        expected.transactionID = "2000000002"
        expected.purchasedAt = t0 + 30 * day
        #expect(try decide(json, row(verifiedMonthly)) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT"))
        #expect(SubscriptionTransition.between(verifiedMonthly, expected, at: t0 + 29 * day) == .renewed)
    }

    @Test func billingFailureWithGracePeriodKeepsAccess() throws {
        let json = AppleJSON.valid(
            transactions: [T()],
            renewals: [R(expirationIntent: "2", isInBillingRetry: "1", graceEndsMs: t0 + 46 * day)])
        var expected = verifiedMonthly
        expected.isInBillingRetry = true
        expected.gracePeriodExpiresAt = t0 + 46 * day
        expected.expirationIntent = 2
        #expect(try decide(json, row(verifiedMonthly)) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT"))
        #expect(expected.entitlement(at: t0 + 31 * day) == .gracePeriod)
        #expect(expected.entitlement(at: t0 + 46 * day) == .billingRetry)
        #expect(SubscriptionTransition.between(verifiedMonthly, expected, at: t0 + 31 * day) == .enteredGrace)
    }

    @Test func billingRetryWithoutGracePeriodEndsAccess() throws {
        let json = AppleJSON.valid(transactions: [T()], renewals: [R(expirationIntent: "2", isInBillingRetry: "1")])
        var expected = verifiedMonthly
        expected.isInBillingRetry = true
        expected.expirationIntent = 2
        #expect(try decide(json, row(verifiedMonthly)) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT"))
        #expect(expected.entitlement(at: t0 + 31 * day) == .billingRetry)
        #expect(expected.entitlement(at: t0 + 31 * day).isEntitled == false)
        #expect(SubscriptionTransition.between(verifiedMonthly, expected, at: t0 + 31 * day) == .enteredBillingRetry)
    }

    /// A refund of an earlier period shows in `latest_receipt_info` as that entry's cancellation
    /// date: the columns stay on the current period, and the evidence names the refunded one.
    @Test func anEarlierRefundedPeriodIsEvidenceNotTheColumns() throws {
        let refundedEarlier = T(transactionID: "2000000001", purchaseMs: t0, expiresMs: t0 + 30 * day, cancellationMs: t0 + 33 * day)
        let current = T(transactionID: "2000000002", purchaseMs: t0 + 30 * day, expiresMs: t0 + 60 * day)
        let json = AppleJSON.valid(transactions: [current, refundedEarlier], renewals: [R()])
        var expected = verifiedMonthly
        expected.expiresAt = t0 + 60 * day
        expected.transactionID = "2000000002"
        expected.purchasedAt = t0 + 30 * day
        let evidence = ChainEvidence(revokedPeriods: [RevokedTransaction(transactionID: "2000000001", productID: "premium.monthly", revokedAtMs: t0 + 33 * day)])
        #expect(try decide(json, row(verifiedMonthly)) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT", evidence: evidence))
    }

    @Test func recoveryClearsRetryGraceAndIntent() throws {
        var inGrace = verifiedMonthly
        inGrace.isInBillingRetry = true
        inGrace.gracePeriodExpiresAt = t0 + 46 * day
        inGrace.expirationIntent = 2
        let recovered = T(transactionID: "2000000002", purchaseMs: t0 + 35 * day, expiresMs: t0 + 65 * day)
        let json = AppleJSON.valid(transactions: [T(), recovered], renewals: [R(isInBillingRetry: "0")])
        var expected = verifiedMonthly
        expected.expiresAt = t0 + 65 * day
        expected.transactionID = "2000000002"
        expected.purchasedAt = t0 + 35 * day
        #expect(try decide(json, row(inGrace)) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT"))
        #expect(SubscriptionTransition.between(inGrace, expected, at: t0 + 35 * day) == .recovered)
    }

    @Test func voluntaryChurnAutoRenewOffThenExpiredWithIntent() throws {
        let off = AppleJSON.valid(transactions: [T()], renewals: [R(autoRenewStatus: "0")])
        var autoRenewOff = verifiedMonthly
        autoRenewOff.autoRenewStatus = false
        #expect(try decide(off, row(verifiedMonthly)) == .adopt(autoRenewOff, latestReceipt: "UPDATED-RECEIPT"))
        #expect(SubscriptionTransition.between(verifiedMonthly, autoRenewOff, at: t0 + 29 * day) == .autoRenewOff)

        let lapsed = AppleJSON.valid(transactions: [T()], renewals: [R(autoRenewStatus: "0", expirationIntent: "1", isInBillingRetry: "0")])
        var expired = autoRenewOff
        expired.expirationIntent = 1
        #expect(try decide(lapsed, row(autoRenewOff)) == .adopt(expired, latestReceipt: "UPDATED-RECEIPT"))
        #expect(expired.entitlement(at: t0 + 31 * day) == .expired)
        #expect(SubscriptionTransition.between(autoRenewOff, expired, at: t0 + 31 * day) == .expired)
    }

    @Test func refundRevokesBeforeExpiry() throws {
        let json = AppleJSON.valid(transactions: [T(cancellationMs: t0 + 5 * day)], renewals: [R(autoRenewStatus: "0")])
        var expected = verifiedMonthly
        expected.cancelledAt = t0 + 5 * day
        expected.autoRenewStatus = false
        #expect(try decide(json, row(verifiedMonthly)) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT"))
        #expect(expected.entitlement(at: t0 + 6 * day) == .refunded)
        #expect(expected.entitlement(at: t0 + 6 * day).isEntitled == false)
        #expect(SubscriptionTransition.between(verifiedMonthly, expected, at: t0 + 6 * day) == .refunded)
    }

    @Test func upgradeLeavesOutTheUpgradedTransactionEvenIfItExpiresLater() throws {
        // A yearly basic plan upgraded on day 10 to monthly pro: the yearly transaction is marked
        // upgraded and cancelled, and still carries the later expiry.
        let basicYearly = T(productID: "basic.yearly", transactionID: "2000000001", purchaseMs: t0, expiresMs: t0 + 365 * day, cancellationMs: t0 + 10 * day, isUpgraded: true)
        let proMonthly = T(productID: "pro.monthly", transactionID: "2000000002", purchaseMs: t0 + 10 * day, expiresMs: t0 + 40 * day)
        let json = AppleJSON.valid(transactions: [basicYearly, proMonthly], renewals: [R(productID: "pro.monthly", autoRenewProductID: "pro.monthly")])
        var before = verifiedMonthly
        before.productID = "basic.yearly"
        before.expiresAt = t0 + 365 * day
        let expected = SubscriptionState(
            originalTransactionID: "1000000001", productID: "pro.monthly", environment: "Production",
            expiresAt: t0 + 40 * day, autoRenewStatus: true, autoRenewProductID: "pro.monthly", transactionID: "2000000002", purchasedAt: t0 + 10 * day,
            ownershipType: "PURCHASED")
        #expect(try decide(json, row(before)) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT"))
        #expect(SubscriptionTransition.between(before, expected, at: t0 + 10 * day) == .upgraded)
    }

    @Test func downgradeShowsInAutoRenewProduct() throws {
        let json = AppleJSON.valid(transactions: [T()], renewals: [R(autoRenewProductID: "basic.monthly")])
        var expected = verifiedMonthly
        expected.autoRenewProductID = "basic.monthly"
        #expect(try decide(json, row(verifiedMonthly)) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT"))
        #expect(SubscriptionTransition.between(verifiedMonthly, expected, at: t0) == .otherChange)
    }

    @Test func sandboxReceiptRecordsItsEnvironment() throws {
        let json = AppleJSON.valid(environment: "Sandbox", transactions: [T()], renewals: [R()])
        var expected = verifiedMonthly
        expected.environment = "Sandbox"
        #expect(try decide(json, row()) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT"))
    }

    @Test func multiGroupReceiptKeepsTheRowOnItsOwnChain() throws {
        let groupA = T(productID: "premium.monthly", originalTransactionID: "1000000001", transactionID: "2000000001", expiresMs: t0 + 30 * day, groupID: "A")
        let groupB = T(productID: "storage.yearly", originalTransactionID: "1000000500", transactionID: "2000000500", expiresMs: t0 + 365 * day, groupID: "B")
        let groupAOld = T(productID: "premium.monthly", originalTransactionID: "1000000001", transactionID: "2000000000", purchaseMs: t0 - 30 * day, expiresMs: t0, groupID: "A")
        let renewals = [R(originalTransactionID: "1000000500", productID: "storage.yearly", autoRenewProductID: "storage.yearly", autoRenewStatus: "0"), R()]
        let json = AppleJSON.valid(transactions: [groupB, groupAOld, groupA], renewals: renewals)
        // The row that owns group A stays on A, though B expires later.
        #expect(try decide(json, row(verifiedMonthly)) == .adopt(verifiedMonthly, latestReceipt: "UPDATED-RECEIPT"))
        // A new row adopts the chain that runs longest, with that chain's own renewal info.
        let adopted = SubscriptionState(
            originalTransactionID: "1000000500", productID: "storage.yearly", environment: "Production",
            expiresAt: t0 + 365 * day, autoRenewStatus: false, autoRenewProductID: "storage.yearly", transactionID: "2000000500", purchasedAt: t0,
            ownershipType: "PURCHASED")
        #expect(try decide(json, row()) == .adopt(adopted, latestReceipt: "UPDATED-RECEIPT", otherChains: [verifiedMonthly]))
    }

    /// A real two-subscription receipt: one chain live and renewing, the other refunded and
    /// expiring 170 s after it. Picking by expiry alone showed a paying user as refunded.
    @Test func aNewRowAdoptsTheChainThatGrantsAccessBeforeALaterRefundedOne() throws {
        let live = T(productID: "premium.monthly", originalTransactionID: "1000000001", transactionID: "2000000001", expiresMs: t0 + 30 * day, groupID: "A")
        let refunded = T(
            productID: "premium.yearly", originalTransactionID: "1000000777", transactionID: "2000000777",
            expiresMs: t0 + 30 * day + 170_000, cancellationMs: t0 + 2 * day, groupID: "B")
        let renewals = [R(), R(originalTransactionID: "1000000777", productID: "premium.yearly", autoRenewProductID: "premium.yearly", autoRenewStatus: "0")]
        let json = AppleJSON.valid(transactions: [refunded, live], renewals: renewals)
        let refundedState = SubscriptionState(
            originalTransactionID: "1000000777", productID: "premium.yearly", environment: "Production",
            expiresAt: t0 + 30 * day + 170_000, autoRenewStatus: false, autoRenewProductID: "premium.yearly", cancelledAt: t0 + 2 * day,
            transactionID: "2000000777", purchasedAt: t0, ownershipType: "PURCHASED")
        // At the run's clock the live chain grants access: adopted; the refunded one is recorded.
        #expect(try decide(json, row(), nowMs: t0 + 10 * day) == .adopt(verifiedMonthly, latestReceipt: "UPDATED-RECEIPT", otherChains: [refundedState]))
        // When no chain grants access (both over), the one that expires last, as before.
        #expect(try decide(json, row(), nowMs: t0 + 40 * day) == .adopt(refundedState, latestReceipt: "UPDATED-RECEIPT", otherChains: [verifiedMonthly]))
        // A row that owns a chain stays on it and records nothing else.
        #expect(try decide(json, row(refundedState), nowMs: t0 + 10 * day) == .adopt(refundedState, latestReceipt: "UPDATED-RECEIPT"))
    }

    @Test func amongChainsThatGrantAccessTheLatestExpiringWinsAndAGracePeriodCounts() throws {
        let soon = T(originalTransactionID: "1000000001", transactionID: "2000000001", expiresMs: t0 + 11 * day, groupID: "A")
        let later = T(productID: "storage.yearly", originalTransactionID: "1000000500", transactionID: "2000000500", expiresMs: t0 + 300 * day, groupID: "B")
        // Expired, but in a grace period that ends after the clock: it grants access too.
        let lapsed = T(productID: "music.monthly", originalTransactionID: "1000000900", transactionID: "2000000900", expiresMs: t0 + 9 * day, groupID: "C")
        let renewals = [
            R(), R(originalTransactionID: "1000000500", productID: "storage.yearly", autoRenewProductID: "storage.yearly"),
            R(originalTransactionID: "1000000900", productID: "music.monthly", autoRenewProductID: "music.monthly", expirationIntent: "2", isInBillingRetry: "1", graceEndsMs: t0 + 20 * day),
        ]
        guard case .adopt(let state, _, let others, _) = try decide(AppleJSON.valid(transactions: [soon, lapsed, later], renewals: renewals), row(), nowMs: t0 + 10 * day) else {
            Issue.record("expected adoption"); return
        }
        #expect(state.originalTransactionID == "1000000500")
        #expect(others.map(\.originalTransactionID) == ["1000000001", "1000000900"])
    }

    @Test func equalExpiriesAdoptTheSmallerOriginalTransactionID() throws {
        let a = T(originalTransactionID: "1000000009", transactionID: "2000000009")
        let b = T(originalTransactionID: "1000000002", transactionID: "2000000002")
        for order in [[a, b], [b, a]] {
            guard case .adopt(let state, _, _, _) = try decide(AppleJSON.valid(transactions: order, renewals: []), row()) else {
                Issue.record("expected adoption"); return
            }
            #expect(state.originalTransactionID == "1000000002")
        }
    }

    @Test func anotherAppsReceiptIsRejected() throws {
        let json = AppleJSON.valid(bundleID: "com.other.app", transactions: [T()], renewals: [R()])
        guard case .reject(let failure) = try decide(json, row(verifiedMonthly)) else { Issue.record("must reject"); return }
        #expect(failure.reason == .bundleMismatch)
        #expect(failure.detail == "receipt is for bundle com.other.app, expected com.example.premium")
    }

    @Test func answerWithoutReceiptObjectIsRejected() throws {
        guard case .reject(let failure) = try decide(#"{"status": 0, "latest_receipt_info": []}"#, row()) else { Issue.record("must reject"); return }
        #expect(failure.reason == .bundleMismatch)
    }

    @Test func rowsChainMissingFromTheAnswerIsRejected() throws {
        let json = AppleJSON.valid(transactions: [T(originalTransactionID: "1000000999")], renewals: [])
        guard case .reject(let failure) = try decide(json, row(verifiedMonthly)) else { Issue.record("must reject"); return }
        #expect(failure.reason == .chainNotInReceipt)
    }

    @Test func receiptWithoutSubscriptionsIsRejected() throws {
        // A consumable (no expiry) is not a subscription.
        let json = AppleJSON.valid(transactions: [T(productID: "coins.100", expiresMs: nil)], renewals: [])
        guard case .reject(let failure) = try decide(json, row()) else { Issue.record("must reject"); return }
        #expect(failure.reason == .noSubscriptionInReceipt)
    }

    @Test func fieldsAppleNoLongerSendsAreCleared() throws {
        var stale = verifiedMonthly
        stale.gracePeriodExpiresAt = t0 + 46 * day
        stale.isInBillingRetry = true
        stale.expirationIntent = 2
        stale.autoRenewStatus = false
        // No pending_renewal_info entry for the chain at all.
        let json = AppleJSON.valid(transactions: [T()], renewals: [R(originalTransactionID: "other")])
        var expected = verifiedMonthly
        expected.autoRenewStatus = nil
        expected.autoRenewProductID = nil
        #expect(try decide(json, row(stale)) == .adopt(expected, latestReceipt: "UPDATED-RECEIPT"))
    }

    @Test func missingLatestReceiptKeepsTheStoredOne() throws {
        let json = AppleJSON.valid(latestReceipt: nil, transactions: [T()], renewals: [R()])
        #expect(try decide(json, row(verifiedMonthly)) == .adopt(verifiedMonthly, latestReceipt: nil))
    }

    @Test func chainOfOnlyUpgradedTransactionsStillHasAnEffectiveOne() throws {
        let json = AppleJSON.valid(transactions: [T(isUpgraded: true)], renewals: [R()])
        #expect(try decide(json, row(verifiedMonthly)) == .adopt(verifiedMonthly, latestReceipt: "UPDATED-RECEIPT"))
    }
}
