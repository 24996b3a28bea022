import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The report's refund requests: per week by `signedDate`, the answered share, and Apple's
/// decisions by the preference sent.
@Suite struct RefundRequestReportTests {
    static let day: Int64 = 86_400_000
    /// Monday 2026-11-16 00:00 UTC.
    static let monday: Int64 = 1_794_787_200_000

    static func request(_ id: String, at ms: Int64, _ state: ConsumptionState, _ preference: RefundPreference? = nil, decision: String? = nil) -> ConsumptionRequestRecord {
        ConsumptionRequestRecord(
            notificationID: id, transactionID: id, originalTransactionID: nil, subscriptionID: 1, userID: "u", environment: .production, requestedAtMs: ms,
            deadlineMs: ms, periodStartedAtMs: nil, deliveryStatus: .delivered, state: state, nextAttemptAtMs: ms,
            refundPreference: preference, decision: decision)
    }

    @Test func weeksSharesAndOutcomesByPreference() {
        let records = [
            Self.request("a", at: Self.monday + Self.day, .sent, .decline, decision: "declined"),
            Self.request("b", at: Self.monday + 2 * Self.day, .sent, .decline, decision: "refunded"),
            Self.request("c", at: Self.monday + 6 * Self.day, .noConsent, decision: "refunded"),
            Self.request("d", at: Self.monday + 7 * Self.day, .sent),
            Self.request("e", at: Self.monday + 8 * Self.day, .expired, decision: "declined"),
            Self.request("outside", at: Self.monday - 1, .sent),
        ]
        let report = RefundRequestReport(records, fromMs: Self.monday, toMs: Self.monday + 14 * Self.day)
        #expect(report.weeks == [
            .init(startMs: Self.monday, requests: 3, answered: 2, noConsent: 1, expired: 0, refunded: 2, declined: 1),
            .init(startMs: Self.monday + 7 * Self.day, requests: 2, answered: 1, noConsent: 0, expired: 1, refunded: 0, declined: 1),
        ])
        #expect(report.answeredShare == 0.6)
        #expect(report.byPreference == [
            .init(preference: "DECLINE", requests: 2, refunded: 1, declined: 1),
            .init(preference: "none", requests: 1, refunded: 0, declined: 0),
            .init(preference: "unanswered", requests: 2, refunded: 1, declined: 1),
        ])
        #expect(report.byPreference.map(\.undecided) == [0, 1, 0])
        #expect(RefundRequestReport().answeredShare == nil)
    }
}
