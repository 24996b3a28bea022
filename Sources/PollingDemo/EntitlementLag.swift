import AppStoreSimulator

/// How long each lifecycle event of the simulated App Store took to reach its row: from the
/// event's instant until the row held Apple data at least that new — a notification that told
/// it (or a later one), or a verification after it. Simulated time throughout.
public struct EntitlementLag: Sendable {
    /// Lags in ms, by what the events were; `all` holds the events that change a column.
    public private(set) var all: [Int64] = []
    public private(set) var refunds: [Int64] = []
    public private(set) var recoveries: [Int64] = []
    /// Lags by the kind of event (a refund of an earlier period, a revoke, a declined request…).
    public private(set) var byKind: [LifecycleEvent.Kind: [Int64]] = [:]
    /// Events no row reflected by the end (a chain no row holds yet, or one still wrong).
    public var unreflected: Int { pending.values.reduce(0) { $0 + $1.count } }
    /// Events waiting, by `original_transaction_id`, oldest first.
    private var pending: [String: [LifecycleEvent]] = [:]

    public init() {}

    /// The App Store's events in a stretch of simulated time, in time order.
    mutating func happened(_ events: [LifecycleEvent]) {
        for event in events { pending[event.originalTransactionID, default: []].append(event) }
    }

    /// At `atMs`, the row of `originalTransactionID` held Apple's data as of `asOfMs`: every
    /// event of its chain up to then has reached it.
    mutating func reflected(_ originalTransactionID: String, asOfMs: Int64, atMs: Int64) {
        guard var events = pending[originalTransactionID] else { return }
        let reached = events.prefix { $0.atMs <= asOfMs }
        for event in reached {
            let lag = max(0, atMs - event.atMs)
            if event.changesEntitlement { all.append(lag) }
            if event.isRefund { refunds.append(lag) }
            if event.isRecovery { recoveries.append(lag) }
            byKind[event.kind, default: []].append(lag)
        }
        events.removeFirst(reached.count)
        pending[originalTransactionID] = events.isEmpty ? nil : events
    }

    /// p50, p95 and the maximum of `lags` (ms), nil when there are none.
    public static func percentiles(_ lags: [Int64]) -> (p50: Int64, p95: Int64, max: Int64)? {
        guard !lags.isEmpty else { return nil }
        let sorted = lags.sorted()
        func at(_ q: Double) -> Int64 { sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded(.up)))] }
        return (at(0.5), at(0.95), sorted.last!)
    }
}
