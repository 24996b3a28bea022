import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The policy's decision over the facts we hold: consent first, the first matching rule's
/// preference, the retry waits, and the rules as the config file writes them.
@Suite struct ConsumptionPolicyTests {
    static let day: Int64 = 86_400_000

    static func request(daysIn: Int64, priorRefunds: Int = 0, usedAt: Int64? = nil, consented: Bool? = true) -> ConsumptionRequestRecord {
        ConsumptionRequestRecord(
            notificationID: "n", transactionID: "t", originalTransactionID: "o", subscriptionID: 1, userID: "u", environment: .production,
            requestedAtMs: 100 * day + daysIn * day, deadlineMs: 0, periodStartedAtMs: 100 * day, deliveryStatus: .delivered, priorRefunds: priorRefunds,
            nextAttemptAtMs: 0, customerConsented: consented, lastUsedAtMs: usedAt)
    }

    static let rules = [
        RefundPreferenceRule(prefer: .grantFull, maxDaysSincePeriodStart: 3, periodUsed: false),
        RefundPreferenceRule(prefer: .decline, minPriorRefunds: 2),
        RefundPreferenceRule(prefer: .grantProrated, minDaysSincePeriodStart: 7, periodUsed: true),
    ]

    struct Case: Sendable, CustomTestStringConvertible {
        var request: ConsumptionRequestRecord
        var preference: RefundPreference?
        var testDescription: String { "\(preference?.rawValue ?? "none")" }
    }

    @Test(arguments: [
        Case(request: request(daysIn: 1), preference: .grantFull),
        Case(request: request(daysIn: 3), preference: nil),
        Case(request: request(daysIn: 1, usedAt: 100 * day + 1), preference: nil),
        Case(request: request(daysIn: 1, priorRefunds: 2, usedAt: 100 * day), preference: .decline),
        Case(request: request(daysIn: 8, usedAt: 101 * day), preference: .grantProrated),
        // Used before the period began is not used in it.
        Case(request: request(daysIn: 8, usedAt: 99 * day), preference: nil),
    ])
    func theFirstMatchingRuleGivesThePreference(_ c: Case) {
        let answer = ConsumptionPolicy(rules: Self.rules).answer(c.request)
        #expect(answer == ConsumptionInformation(customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false, refundPreference: c.preference))
    }

    @Test func withoutConsentThereIsNoAnswer() {
        #expect(ConsumptionPolicy(rules: Self.rules).answer(Self.request(daysIn: 1, consented: nil)) == nil)
        #expect(ConsumptionPolicy(rules: Self.rules).answer(Self.request(daysIn: 1, consented: false)) == nil)
    }

    @Test func theBodyIsAppleJSONWithSortedKeys() {
        let answer = ConsumptionInformation(customerConsented: true, deliveryStatus: .undeliveredOther, sampleContentProvided: true, refundPreference: .grantProrated)
        #expect(answer.json == #"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","refundPreference":"GRANT_PRORATED","sampleContentProvided":true}"#)
    }

    @Test func retriesWaitForRetryAfterElseDoubleUpToTheCap() {
        let policy = ConsumptionPolicy(firstRetry: .seconds(30), maximumRetry: .seconds(100))
        #expect(policy.retryDelay(afterAttempts: 1, retryAfter: nil) == .seconds(30))
        #expect(policy.retryDelay(afterAttempts: 2, retryAfter: nil) == .seconds(60))
        #expect(policy.retryDelay(afterAttempts: 3, retryAfter: nil) == .seconds(100))
        #expect(policy.retryDelay(afterAttempts: 2, retryAfter: .seconds(7)) == .seconds(7))
    }

    @Test func rulesReadFromTheConfigFileRefuseWhatTheyCannotUse() throws {
        let rule = try RefundPreferenceRule(json: ["prefer": "DECLINE", "min_prior_refunds": 2, "period_used": true])
        #expect(rule == RefundPreferenceRule(prefer: .decline, minPriorRefunds: 2, periodUsed: true))
        #expect(throws: ConsumptionPolicyError.self) { try RefundPreferenceRule(json: ["prefer": "MAYBE"]) }
        #expect(throws: ConsumptionPolicyError.self) { try RefundPreferenceRule(json: ["prefer": "DECLINE", "since": 3]) }
        #expect(throws: ConsumptionPolicyError.self) { try RefundPreferenceRule(json: ["prefer": "DECLINE", "min_prior_refunds": -1]) }
        #expect(throws: ConsumptionPolicyError.self) { try RefundPreferenceRule(json: ["prefer": "DECLINE", "period_used": "yes"]) }
    }

    /// V1 names no single transaction: the chain's latest purchase is the one asked about; V2 the
    /// one it carries. Other types queue nothing; REFUND and REFUND_DECLINED bring Apple's decision.
    @Test func whichTransactionARequestAsksAbout() {
        let row = SubscriptionRow(id: 7, userID: "u", latestReceipt: "R", state: SubscriptionState(
            originalTransactionID: "o", productID: "p", expiresAt: 300, transactionID: "t3", purchasedAt: 200))
        let transactions = [
            SubscriptionTransaction(productID: "p", transactionID: "t2", originalTransactionID: "o", purchaseDateMs: 100, expiresDateMs: 200),
            SubscriptionTransaction(productID: "p", transactionID: "t3", originalTransactionID: "o", purchaseDateMs: 200, expiresDateMs: 300),
        ]
        func notification(_ version: Int, _ type: String, _ transactions: [SubscriptionTransaction]) -> ReceivedNotification {
            ReceivedNotification(
                id: "n", version: version, type: type, subtype: nil, signedAtMs: version == 2 ? 250 : nil, appleStateAtMs: 260, originalTransactionID: "o",
                appAccountToken: nil, environment: .production, source: .push, receivedAtMs: 270,
                answer: StatusAnswer(upstreamStatus: UpstreamStatus(backend: .notification, code: 1), bundleID: "b", environment: "Production", transactions: transactions, renewals: []))
        }
        let v1 = ConsumptionQueue.request(notification(1, "CONSUMPTION_REQUEST", transactions), row: row)
        #expect(v1?.transactionID == "t3")
        #expect(v1?.requestedAtMs == 260)
        let deadline: Int64 = 260 + 12 * 3_600_000
        #expect(v1?.deadlineMs == deadline)
        #expect(v1?.deliveryStatus == .delivered)
        let v2 = ConsumptionQueue.request(notification(2, "CONSUMPTION_REQUEST", [transactions[0]]), row: row)
        #expect(v2?.transactionID == "t2")
        #expect(v2?.requestedAtMs == 250)
        #expect(v2?.periodStartedAtMs == 100)
        #expect(v2?.deliveryStatus == .delivered)
        #expect(v2?.nextAttemptAtMs == 270)
        #expect(ConsumptionQueue.request(notification(2, "DID_RENEW", transactions), row: row) == nil)
        // The row refunded in the asked-about period: not delivered.
        var refunded = row
        refunded.state.cancelledAt = 280
        #expect(ConsumptionQueue.request(notification(2, "CONSUMPTION_REQUEST", [transactions[1]]), row: refunded)?.deliveryStatus == .undeliveredOther)
        #expect(ConsumptionQueue.decision(notification(2, "REFUND_DECLINED", [transactions[0]]))! == ("t2", "declined"))
        var revoked = transactions
        revoked[0].revocationDateMs = 150
        #expect(ConsumptionQueue.decision(notification(1, "REFUND", revoked))! == ("t2", "refunded"))
        #expect(ConsumptionQueue.decision(notification(2, "CONSUMPTION_REQUEST", transactions)) == nil)
    }
}
