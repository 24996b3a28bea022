import AppStoreSimulator
import EntitlementCore
import StatusPolling

/// Resubscriptions bought outside the app (no receipt upload), and how long each took to show in
/// its row: the lapsed sweep's promise, measured on the simulated clock.
public struct ComebackWatch: Sendable {
    public struct Comeback: Sendable {
        public var subscriptionID: Int64
        public var originalTransactionID: String
        public var atMs: Int64
        /// The first night whose row knew of it.
        public var seenAtMs: Int64?
    }

    public private(set) var comebacks: [Comeback] = []
    /// The clock of the last night looked at.
    public private(set) var lastLookMs: Int64?

    /// Adds the comebacks of (after, through] of chains that have a row.
    mutating func note(_ population: Population, rows: [Int64: SubscriptionState], after: Int64, through: Int64) {
        let rowByChain = Self.rowByChain(rows)
        for subscriber in population.subscribers {
            for comeback in subscriber.resubscriptionsOutsideApp(after: after, through: through) {
                guard let id = rowByChain[comeback.originalTransactionID] else { continue }
                comebacks.append(Comeback(subscriptionID: id, originalTransactionID: comeback.originalTransactionID, atMs: comeback.atMs))
            }
        }
    }

    /// Marks the comebacks whose row now holds a period that ends after the purchase (before it,
    /// the row ended at the lapse, which came earlier).
    mutating func look(at rows: [Int64: SubscriptionState], clockMs: Int64) {
        lastLookMs = clockMs
        for index in comebacks.indices where comebacks[index].seenAtMs == nil {
            if let expires = rows[comebacks[index].subscriptionID]?.expiresAt, expires > comebacks[index].atMs {
                comebacks[index].seenAtMs = clockMs
            }
        }
    }

    /// Time from the purchase to the night that showed it, of the comebacks seen, shortest first.
    public var lags: [Int64] { comebacks.compactMap { c in c.seenAtMs.map { $0 - c.atMs } }.sorted() }

    /// Comebacks no night has shown yet.
    public var unseen: [Comeback] { comebacks.filter { $0.seenAtMs == nil } }

    /// The nearest-rank percentile `p` (0…100) of ``lags``.
    public func lag(percentile p: Double) -> Int64? {
        let sorted = lags
        guard !sorted.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count, max(1, rank)) - 1]
    }

    private static func rowByChain(_ rows: [Int64: SubscriptionState]) -> [String: Int64] {
        var byChain: [String: Int64] = [:]
        for (id, state) in rows { if let chain = state.originalTransactionID { byChain[chain] = id } }
        return byChain
    }
}
