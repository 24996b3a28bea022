import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The event vocabulary's one derivation: every audit reason and lifecycle change to its word, and
/// the audit rows that change nothing to no event.
@Suite struct EventKindTests {
    static let t0: Int64 = 1_750_000_000_000
    static let day: Int64 = 86_400_000

    static let active = SubscriptionState(
        originalTransactionID: "1000", productID: "monthly", environment: "Production", expiresAt: t0 + 10 * day, autoRenewStatus: true,
        autoRenewProductID: "monthly", transactionID: "t1", purchasedAt: t0 - 20 * day)

    static func with(_ change: (inout SubscriptionState) -> Void, from state: SubscriptionState = active) -> SubscriptionState {
        var s = state
        change(&s)
        return s
    }

    /// A renewal's period begins where the old one ends; a comeback's after a gap.
    static let renewed = with { $0.expiresAt = t0 + 40 * day; $0.purchasedAt = t0 + 10 * day; $0.transactionID = "t2" }
    static let lapsed = with { $0.expiresAt = t0 - 5 * day; $0.autoRenewStatus = false }
    static let cameBack = with({ $0.expiresAt = t0 + 30 * day; $0.purchasedAt = t0; $0.autoRenewStatus = true; $0.transactionID = "t3" }, from: lapsed)
    static let retrying = with { $0.expiresAt = t0 - day; $0.isInBillingRetry = true }

    static let cases: [(String, AuditReason, SubscriptionState, SubscriptionState, EventKind?)] = [
        ("first verification", .transition(.firstVerified), .unverified, active, .initialPurchase),
        ("a chain found in the receipt", .discovered, .unverified, active, .initialPurchase),
        ("renewal where the old period ends", .transition(.renewed), active, renewed, .renewal),
        ("renewal found by a poll hours after the old expiry is still a renewal", .transition(.renewed),
         with { $0.expiresAt = t0 - 3 * 3_600_000 }, with { $0.expiresAt = t0 + 27 * day; $0.purchasedAt = t0 - 3 * 3_600_000 }, .renewal),
        ("a new period days after access ended", .transition(.renewed), lapsed, cameBack, .resubscribed),
        ("a new period after Apple said why it expired", .transition(.renewed), with({ $0.expirationIntent = 1 }, from: lapsed),
         with({ $0.purchasedAt = nil }, from: cameBack), .resubscribed),
        ("a new period after a refund", .transition(.renewed), with { $0.cancelledAt = t0 - day }, cameBack, .resubscribed),
        ("a new product within the group", .transition(.upgraded), active, with { $0.productID = "yearly"; $0.expiresAt = t0 + 355 * day; $0.purchasedAt = t0 },
         .productChange),
        ("another product after a lapse", .transition(.upgraded), lapsed, with({ $0.productID = "yearly"; $0.expiresAt = t0 + 360 * day }, from: cameBack),
         .resubscribed),
        ("grace period", .transition(.enteredGrace), active, with { $0.expiresAt = t0 - day; $0.isInBillingRetry = true; $0.gracePeriodExpiresAt = t0 + 5 * day },
         .billingIssue),
        ("billing retry", .transition(.enteredBillingRetry), active, retrying, .billingIssue),
        ("retry succeeded", .transition(.recovered), retrying, with { $0.expiresAt = t0 + 29 * day; $0.purchasedAt = t0 }, .recovered),
        ("expired with intent", .transition(.expired), retrying, with({ $0.isInBillingRetry = false; $0.expirationIntent = 2 }, from: retrying), .expired),
        ("auto-renew off", .transition(.autoRenewOff), active, with { $0.autoRenewStatus = false }, .autoRenewDisabled),
        ("auto-renew back on", .transition(.otherChange), with { $0.autoRenewStatus = false }, active, .autoRenewEnabled),
        ("refund", .transition(.refunded), active, with { $0.cancelledAt = t0 }, .refunded),
        ("refund reversed", .transition(.refundReversed), with { $0.cancelledAt = t0 }, active, .refundReversed),
        ("refund of last month", .refundedEarlierPeriod, active, active, .refundedEarlierPeriod),
        ("refund of last month reversed", .refundReversedEarlierPeriod, active, active, .refundReversed),
        ("renewal date extended", .transition(.extended), active, with { $0.expiresAt = (active.expiresAt ?? 0) + 10 * day }, .renewalExtended),
        ("another column", .transition(.otherChange), active, with { $0.renewalBillingPlanType = "MONTHLY" }, .changed),
        ("an answer older than the row's data", .stale, active, lapsed, nil),
        ("a chain another row owns", .conflict, .unverified, .unverified, nil),
        ("nothing changed", .transition(.unchanged), active, active, nil),
    ]

    @Test(arguments: cases.indices) func eachChangeHasItsWord(index: Int) {
        let (name, reason, before, after, expected) = Self.cases[index]
        #expect(EventKind(reason: reason, before: before, after: after) == expected, "\(name)")
    }

    /// The derivation agrees with the plan's own naming of changes: a poll's transition, as
    /// `SubscriptionTransition.between` names it, maps to the word the table above expects.
    @Test func theTransitionsOfRealChangesMapAsTheTableSays() {
        let now = Self.t0
        func kind(_ before: SubscriptionState, _ after: SubscriptionState) -> EventKind? {
            EventKind(reason: .transition(.between(before, after, at: now)), before: before, after: after)
        }
        #expect(kind(.unverified, Self.active) == .initialPurchase)
        #expect(kind(Self.active, Self.renewed) == .renewal)
        #expect(kind(Self.lapsed, Self.cameBack) == .resubscribed)
        #expect(kind(Self.active, Self.retrying) == .billingIssue)
        #expect(kind(Self.retrying, Self.renewed) == .recovered)
        #expect(kind(Self.active, Self.with { $0.autoRenewStatus = false }) == .autoRenewDisabled)
        #expect(kind(Self.with { $0.autoRenewStatus = false }, Self.active) == .autoRenewEnabled)
        #expect(kind(Self.active, Self.with { $0.cancelledAt = now }) == .refunded)
        #expect(kind(Self.active, Self.with { $0.expiresAt = (Self.active.expiresAt ?? 0) + 10 * Self.day }) == .renewalExtended)
        #expect(kind(Self.active, Self.active) == nil)
    }

    @Test func theBodyCarriesTheChangeInTheEntitlementsWords() throws {
        let plan = RowUpdatePlan(
            .verified(VerifiedUpdate(
                subscriptionID: 7, provenance: .notification(notificationUUID: "n-1", type: "EXPIRED/VOLUNTARY", signedAtMs: Self.t0 - 1000),
                receiptSent: nil, state: Self.with { $0.expiresAt = Self.t0 - Self.day; $0.expirationIntent = 1; $0.autoRenewStatus = false },
                latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: Self.t0, appleStateAtMs: Self.t0 - 1000)),
            current: .init(userID: "u-1", holdsReceiptSent: true, state: Self.with { $0.expiresAt = Self.t0 - Self.day }, appleStateAtMs: Self.t0 - 2 * Self.day),
            ownerOf: { _ in nil })
        let event = try #require(plan.events.last)
        let outbound = try #require(OutboundEvent(event, plan: plan, subscriptionID: 7, userID: "u-1", auditEventID: 42, eventID: "evt_fixed"))
        #expect(outbound.kind == .expired)
        #expect(outbound.body == """
            {"id":"evt_fixed","type":"expired","timestamp":"2025-06-15T15:06:40.000Z","data":{"user_id":"u-1","subscription_id":7,\
            "original_transaction_id":"1000","product_id":"monthly","transaction_id":"t1","environment":"Production",\
            "entitlement_before":{"state":"expired","is_entitled":false,"entitled_until_ms":\(Self.t0 - Self.day)},\
            "entitlement_after":{"state":"expired","is_entitled":false,"entitled_until_ms":\(Self.t0 - Self.day)},"expiration_intent":1,\
            "audit_event_id":42,"source":"notification","notification_id":"n-1","apple_at_ms":\(Self.t0 - 1000),"at_ms":\(Self.t0)}}
            """)
        #expect(OutboundEvent.newID().count == 36)
        #expect(OutboundEvent.newID().hasPrefix("evt_"))
    }
}
