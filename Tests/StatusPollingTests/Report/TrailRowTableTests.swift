import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The report's per-subscription records: compact, and exactly what they were given.
@Suite struct TrailRowTableTests {
    @Test func rowsByIDAcrossPagesAndSparseIDs() {
        var table = TrailRowTable()
        let ids: [Int64] = [1, 4_095, 4_096, 9_000_000_123, 2]
        for (index, id) in ids.enumerated() { table[id] = .init(columns: .unverified, sinceMs: Int64(index)) }
        #expect(table.ids == [1, 2, 4_095, 4_096, 9_000_000_123])
        #expect(table[4_096]?.sinceMs == 2)
        #expect(table[9_000_000_123]?.sinceMs == 3)
        #expect(table[3] == nil)  // a page holds it, never set
        #expect(table[8_192] == nil)  // no page
        table[4_095] = nil
        #expect(table.ids == [1, 2, 4_096, 9_000_000_123])
    }

    @Test func aRowKeepsItsEpisodeAndChurn() {
        var row = TrailRowTable.Row(columns: .unverified, sinceMs: 0)
        #expect(row.episode == nil && row.churn == nil)
        row.episode = BillingEpisode(subscriptionID: 0, startMs: 10, seenAtMs: 20, graceEndsMs: nil)
        #expect(row.episode == BillingEpisode(subscriptionID: 0, startMs: 10, seenAtMs: 20, graceEndsMs: nil))
        row.episode?.graceEndsMs = 30
        #expect(row.episode?.graceEndsMs == 30)
        for intent in ["1", "2", "5", "refunded", nil] as [String?] {
            row.churn = (40, intent)
            #expect(row.churn?.atMs == 40)
            #expect(row.churn?.intent == intent)
        }
        row.churn = nil
        row.episode = nil
        #expect(row.episode == nil && row.churn == nil)
        let refunds = [1_767_571_200_000, 1_767_571_200_000, 1_767_571_200_001, 1_767_571_200_000].map { row.isNewRefund(at: $0) }
        #expect(refunds == [true, false, true, true])
        #expect(MemoryLayout<TrailRowTable.Row>.stride <= 80)
    }

    @Test func theCompactStateReadsBackEveryColumn() {
        let whole = SubscriptionState(
            originalTransactionID: "1000000001", productID: "p", environment: "Production", expiresAt: 5, gracePeriodExpiresAt: 6,
            isInBillingRetry: true, autoRenewStatus: false, autoRenewProductID: "p", expirationIntent: 2, cancelledAt: 7)
        let state = TrailState(whole)
        #expect([state.expiresAt, state.gracePeriodExpiresAt, state.cancelledAt] == [5, 6, 7])
        #expect(state.isVerified && state.isInBillingRetry)
        #expect(state.autoRenewStatus == false)
        #expect(state.expirationIntent == 2)
        #expect(TrailState(SubscriptionState(originalTransactionID: "1", autoRenewStatus: true)).autoRenewStatus == true)
        let empty = TrailState.unverified
        #expect(!empty.isVerified && !empty.isInBillingRetry)
        #expect(empty.expiresAt == nil && empty.gracePeriodExpiresAt == nil && empty.cancelledAt == nil)
        #expect(empty.autoRenewStatus == nil && empty.expirationIntent == nil)
        for at in [Int64(0), 5, 6, 8] { #expect(state.entitlement(at: at) == whole.entitlement(at: at)) }
        #expect(MemoryLayout<TrailState>.stride == 32)
    }
}
