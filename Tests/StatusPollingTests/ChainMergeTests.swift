import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// A subscription is the transactions of its chain: a message about another period changes only
/// what it is authoritative for. Each rule on its own, then every order of every subset of one
/// chain's messages (genuine Apple traffic's shape: a refund of last month while this month runs).
@Suite struct ChainMergeTests {
    static let t0 = AppleJSON.t0
    static let day = AppleJSON.day
    static let monthly = "com.example.premium.monthly"
    static let quarterly = "com.example.premium.quarterly"

    /// One transaction of the chain "otid", as a V2 notification carries it.
    struct Period {
        var id: String
        var product: String
        var purchased: Int64
        var expires: Int64
        var revoked: Int64? = nil
        var isUpgraded = false
    }

    static let first = Period(id: "t1", product: monthly, purchased: t0, expires: t0 + 30 * day)
    static let second = Period(id: "t2", product: monthly, purchased: t0 + 30 * day, expires: t0 + 60 * day)

    /// A notification's data about `period` signed at `signed`, with renewal info and Apple's status.
    static func message(
        _ period: Period, signed: Int64, autoRenew: Bool = true, retry: Bool = false, status: AppleSubscriptionStatus?, type: String = "DID_RENEW",
        uuid: String? = nil
    ) -> VerifiedUpdate {
        let state = SubscriptionState(
            originalTransactionID: "otid", productID: period.product, environment: "Production", expiresAt: period.expires, isInBillingRetry: retry,
            autoRenewStatus: autoRenew, autoRenewProductID: period.product, cancelledAt: period.revoked, transactionID: period.id,
            purchasedAt: period.purchased, ownershipType: "PURCHASED")
        return VerifiedUpdate(
            subscriptionID: 1, provenance: .notification(notificationUUID: uuid ?? "n-\(signed)", type: type, signedAtMs: signed), receiptSent: nil,
            state: state, latestReceipt: nil, upstreamStatus: UpstreamStatus(backend: .notification, code: status?.rawValue ?? 0), verifiedAtMs: signed + 1_000,
            appleStateAtMs: signed, evidence: ChainEvidence(scope: .oneTransaction, isUpgraded: period.isUpgraded, appleStatus: status))
    }

    /// The row after `update`, as a writer would hold it next, with the plan.
    static func apply(_ update: VerifiedUpdate, to row: RowUpdatePlan.LockedRow) -> (RowUpdatePlan.LockedRow, RowUpdatePlan) {
        let plan = RowUpdatePlan(.verified(update), current: row, ownerOf: { _ in nil })
        var next = row
        if case .verified(let state, _, _, let appleStateAt) = plan.columns {
            next.state = state
            next.appleStateAtMs = appleStateAt
            next.transactionAsOfMs = plan.transactionAsOfMs
        }
        return (next, plan)
    }

    /// A row that holds `period` as Apple said at `at`.
    static func row(holding period: Period, at: Int64) -> RowUpdatePlan.LockedRow {
        let update = message(period, signed: at, status: nil)
        return .init(userID: "u", holdsReceiptSent: true, state: update.state, appleStateAtMs: at, transactionAsOfMs: at)
    }

    @Test func aRefundOfAnEarlierPeriodTakesNoAccessAndIsRecordedAsARefund() {
        let t0 = Self.t0, day = Self.day
        let held = Self.row(holding: Self.second, at: t0 + 30 * day)
        var refunded = Self.first
        refunded.revoked = t0 + 33 * day
        let (after, plan) = Self.apply(Self.message(refunded, signed: t0 + 33 * day, status: .active, type: "REFUND"), to: held)
        #expect(after.state == held.state)
        #expect(after.appleStateAtMs == t0 + 33 * day && after.transactionAsOfMs == t0 + 30 * day)
        #expect(plan.events == [.init(reason: .refundedEarlierPeriod, old: held.state, new: held.state, transactionID: "t1", revokedAtMs: t0 + 33 * day)])
        #expect(plan.transition == .unchanged && plan.statusAgrees == true && !plan.asksApple)
        #expect(after.state.entitlement(at: t0 + 34 * day).isEntitled)
    }

    @Test func aRefundRequestChangesNoColumnAndNothingInTheTrail() {
        let t0 = Self.t0, day = Self.day
        let held = Self.row(holding: Self.second, at: t0 + 30 * day)
        let (after, plan) = Self.apply(Self.message(Self.first, signed: t0 + 32 * day, status: .active, type: "CONSUMPTION_REQUEST"), to: held)
        #expect(after.state == held.state && plan.events.isEmpty && plan.result == .written(previous: held.state))
        #expect(plan.statusAgrees == true)
    }

    @Test func aRefundOfTheCurrentPeriodEndsAccessAndItsReversalGivesItBack() {
        let t0 = Self.t0, day = Self.day
        let held = Self.row(holding: Self.second, at: t0 + 30 * day)
        var refunded = Self.second
        refunded.revoked = t0 + 35 * day
        let (cancelled, refund) = Self.apply(Self.message(refunded, signed: t0 + 35 * day, status: .revoked, type: "REFUND"), to: held)
        #expect(cancelled.state.cancelledAt == t0 + 35 * day && cancelled.state.expiresAt == t0 + 60 * day)
        #expect(refund.transition == .refunded && refund.statusAgrees == true)
        let (reinstated, reversal) = Self.apply(Self.message(Self.second, signed: t0 + 36 * day, status: .active, type: "REFUND_REVERSED"), to: cancelled)
        #expect(reinstated.state == held.state)
        #expect(reversal.transition == .refundReversed && reversal.statusAgrees == true)
        // The refund delivered again after its reversal (older signing of the same period): nothing.
        let (still, stale) = Self.apply(Self.message(refunded, signed: t0 + 35 * day, status: .revoked, type: "REFUND", uuid: "again"), to: reinstated)
        #expect(still.state == held.state && stale.result == .stale)
    }

    @Test func aReversedRefundOfAnEarlierPeriodIsRecordedWithoutAChange() {
        let t0 = Self.t0, day = Self.day
        let held = Self.row(holding: Self.second, at: t0 + 30 * day)
        let (after, plan) = Self.apply(Self.message(Self.first, signed: t0 + 40 * day, status: .active, type: "REFUND_REVERSED"), to: held)
        #expect(after.state == held.state)
        #expect(plan.events == [.init(reason: .refundReversedEarlierPeriod, old: held.state, new: held.state, transactionID: "t1")])
    }

    /// An immediate upgrade from a longer period to a shorter one: the new transaction expires
    /// before the old would have, and is still the current one (bought later).
    @Test func anUpgradeToAShorterPeriodIsTheCurrentOneThoughItExpiresSooner() {
        let t0 = Self.t0, day = Self.day
        let yearly = Period(id: "y1", product: "com.example.basic.yearly", purchased: t0, expires: t0 + 365 * day)
        let held = Self.row(holding: yearly, at: t0)
        let upgrade = Period(id: "m1", product: Self.monthly, purchased: t0 + 100 * day, expires: t0 + 130 * day)
        let (after, plan) = Self.apply(Self.message(upgrade, signed: t0 + 100 * day, status: .active, type: "DID_CHANGE_RENEWAL_PREF"), to: held)
        #expect(after.state.transactionID == "m1" && after.state.productID == Self.monthly && after.state.expiresAt == t0 + 130 * day)
        #expect(plan.transition == .upgraded)
        // The old period, re-signed as upgraded and delivered late, changes nothing.
        var old = yearly
        old.isUpgraded = true
        let (still, _) = Self.apply(Self.message(old, signed: t0 + 99 * day, status: .active), to: after)
        #expect(still.state == after.state)
    }

    @Test func appleStatusDisagreeingWithTheRowAsksAppleAgain() {
        let t0 = Self.t0, day = Self.day
        // The row holds the first period; Apple's REFUND of it says the subscription is active:
        // a later period exists that no message has brought yet.
        let held = Self.row(holding: Self.first, at: t0)
        var refunded = Self.first
        refunded.revoked = t0 + 33 * day
        let (after, plan) = Self.apply(Self.message(refunded, signed: t0 + 33 * day, status: .active, type: "REFUND"), to: held)
        #expect(after.state.cancelledAt == t0 + 33 * day)
        #expect(plan.statusAgrees == false && plan.asksApple)
    }

    @Test func aRowVerifiedBeforeTransactionIdsWereKeptComparesByDates() {
        let t0 = Self.t0, day = Self.day
        var held = Self.row(holding: Self.second, at: t0 + 30 * day)
        held.state.transactionID = nil
        held.state.purchasedAt = nil
        held.state.ownershipType = nil
        held.transactionAsOfMs = nil
        var refunded = Self.first
        refunded.revoked = t0 + 33 * day
        let (after, plan) = Self.apply(Self.message(refunded, signed: t0 + 33 * day, status: .active, type: "REFUND"), to: held)
        #expect(after.state == held.state)
        #expect(plan.events.map(\.reason) == [.refundedEarlierPeriod])
        // Its own period, renewed: the identity is learnt without an audit row of its own.
        let (renewed, renewal) = Self.apply(Self.message(Self.second, signed: t0 + 34 * day, status: .active), to: after)
        #expect(renewed.state.transactionID == "t2" && renewed.state.purchasedAt == t0 + 30 * day)
        #expect(renewal.events.isEmpty && renewal.transition == .unchanged)
    }

    /// A poll's answer names the chain's latest transaction and shows earlier refunds: a refund
    /// Apple made since the row's last Apple data is recorded once; older ones were seen before.
    @Test func aPollRecordsAnEarlierRefundOnceAndNeverMovesTheRowBack() {
        let t0 = Self.t0, day = Self.day
        let held = Self.row(holding: Self.second, at: t0 + 31 * day)
        var answer = Self.message(Self.second, signed: t0 + 34 * day, status: nil)
        answer.provenance = .poll(runID: 3)
        answer.evidence = ChainEvidence(scope: .latestTransaction, revokedPeriods: [
            RevokedTransaction(transactionID: "t0", productID: Self.monthly, revokedAtMs: t0 - 5 * day),
            RevokedTransaction(transactionID: "t1", productID: Self.monthly, revokedAtMs: t0 + 33 * day),
        ])
        let (after, plan) = Self.apply(answer, to: held)
        #expect(after.state == held.state)
        #expect(plan.events == [.init(reason: .refundedEarlierPeriod, old: held.state, new: held.state, transactionID: "t1", revokedAtMs: t0 + 33 * day)])
        var again = answer
        again.appleStateAtMs = t0 + 35 * day
        #expect(Self.apply(again, to: after).1.events.isEmpty)
        // A lagging answer naming the earlier period as the latest never moves the row back.
        var lagging = Self.message(Self.first, signed: t0 + 36 * day, status: nil)
        lagging.evidence = ChainEvidence(scope: .latestTransaction)
        #expect(Self.apply(lagging, to: after).0.state.expiresAt == t0 + 60 * day)
    }

    /// Every order of every subset of one chain's messages: the row never holds an earlier expiry
    /// than the latest period it was told of, equals the truth once a message of the current
    /// period is in, and otherwise asks Apple whenever Apple's status says more than it knows.
    @Test func everyOrderOfEverySubsetOfAChainsMessagesSettlesOrAsks() {
        let t0 = Self.t0, day = Self.day
        var refunded = Self.first
        refunded.revoked = t0 + 33 * day
        let messages = [
            Self.message(Self.second, signed: t0 + 30 * day, status: .active, type: "DID_RENEW"),
            Self.message(Self.first, signed: t0 + 32 * day, status: .active, type: "CONSUMPTION_REQUEST"),
            Self.message(refunded, signed: t0 + 33 * day, status: .active, type: "REFUND"),
            Self.message(Self.second, signed: t0 + 40 * day, autoRenew: false, status: .active, type: "DID_CHANGE_RENEWAL_STATUS"),
        ]
        let start = Self.row(holding: Self.first, at: t0)
        var sequences = 0
        for mask in 1..<(1 << messages.count) {
            let subset = messages.indices.filter { mask & (1 << $0) != 0 }.map { messages[$0] }
            for order in Self.permutations(subset) {
                sequences += 1
                var row = start
                var asked = false
                var refundsRecorded = 0
                for update in order {
                    let (next, plan) = Self.apply(update, to: row)
                    row = next
                    asked = asked || plan.asksApple
                    refundsRecorded += plan.events.count { $0.reason == .refundedEarlierPeriod }
                        + (plan.transition == .refunded ? 1 : 0)
                }
                let latestKnown = subset.map { $0.state.expiresAt! }.max()!
                #expect(row.state.expiresAt! >= latestKnown)
                let newest = subset.max { $0.appleStateAtMs < $1.appleStateAtMs }!
                if subset.contains(where: { $0.state.transactionID == "t2" }) {
                    #expect(row.state.transactionID == "t2" && row.state.expiresAt == t0 + 60 * day && row.state.cancelledAt == nil)
                    #expect(row.state.autoRenewStatus == newest.state.autoRenewStatus)
                    #expect(row.state.entitlement(at: t0 + 41 * day).isEntitled)
                } else if newest.appleStateAtMs > Self.first.expires {
                    #expect(asked, "Apple's status said active after the first period ended; the row must be asked")
                }
                #expect(refundsRecorded <= 1)
                if subset.contains(where: { $0.state.cancelledAt != nil }) { #expect(refundsRecorded == 1) }
            }
        }
        #expect(sequences == 64)
    }

    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index in
            var rest = items
            let item = rest.remove(at: index)
            return permutations(rest).map { [item] + $0 }
        }
    }
}
