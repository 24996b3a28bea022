/// What ``TrailReportBuilder`` keeps of each subscription, by id, in pages of 4,096 consecutive
/// ids. A table's ids are dense in practice, so a million subscriptions cost a million 80-byte
/// records — a hash table of the same would be twice the slots, and twice again while it grows.
struct TrailRowTable {
    /// What the builder keeps of one subscription between its events.
    struct Row {
        var columns: TrailState
        /// The last refund counted, as a 32-bit fingerprint of its revocation instant (`Int32.min`:
        /// none), in the state's tail padding: the same transaction's refund seen twice (a history
        /// poll, then its delayed notification, in a trail written before the ledger kept them
        /// apart) carries the same instant, and is counted once.
        private var lastRefund = Int32.min
        var sinceMs: Int64
        /// The open billing episode: day 0, when the trail showed it, its grace end (`Int64.min`: none).
        private var episodeStartMs = Int64.min, episodeSeenAtMs = Int64.min, episodeGraceEndsMs = Int64.min
        /// The last churn, while a regain in its week or month could still net it out (`Int64.min`: none).
        private var churnAtMs = Int64.min
        /// Its expiration intent: 1…, or ``refundedIntent``, or −1 unknown.
        private var churnIntent: Int8 = -1
        fileprivate var isPresent = false

        static let refundedIntent: Int8 = 100

        init(columns: TrailState, sinceMs: Int64) {
            self.columns = columns
            self.sinceMs = sinceMs
        }

        fileprivate init() { self.init(columns: .unverified, sinceMs: 0) }

        /// Whether a refund revoked at `ms` is another than the last one counted; it becomes the last.
        mutating func isNewRefund(at ms: Int64) -> Bool {
            let folded = Int32(truncatingIfNeeded: ms ^ (ms >> 32))
            let fingerprint = folded == .min ? folded + 1 : folded
            defer { lastRefund = fingerprint }
            return fingerprint != lastRefund
        }

        var episode: BillingEpisode? {
            get {
                guard episodeStartMs != .min else { return nil }
                return BillingEpisode(
                    subscriptionID: 0, startMs: episodeStartMs, seenAtMs: episodeSeenAtMs,
                    graceEndsMs: episodeGraceEndsMs == .min ? nil : episodeGraceEndsMs)
            }
            set {
                episodeStartMs = newValue?.startMs ?? .min
                episodeSeenAtMs = newValue?.seenAtMs ?? .min
                episodeGraceEndsMs = newValue?.graceEndsMs ?? .min
            }
        }

        /// The churn still open to netting: when, and its intent ("1"…, "refunded", nil unknown).
        var churn: (atMs: Int64, intent: String?)? {
            get {
                guard churnAtMs != .min else { return nil }
                let intent = churnIntent == Self.refundedIntent ? "refunded" : churnIntent < 0 ? nil : String(churnIntent)
                return (churnAtMs, intent)
            }
            set {
                churnAtMs = newValue?.atMs ?? .min
                churnIntent = newValue?.intent.map { $0 == "refunded" ? Self.refundedIntent : Int8($0) ?? -1 } ?? -1
            }
        }
    }

    private static let pageSize: Int64 = 4_096
    private var pages: [Int64: ContiguousArray<Row>] = [:]

    subscript(id: Int64) -> Row? {
        get {
            guard let page = pages[id >> 12] else { return nil }
            let row = page[Int(id & (Self.pageSize - 1))]
            return row.isPresent ? row : nil
        }
        set {
            var row = newValue ?? Row()
            row.isPresent = newValue != nil
            pages[id >> 12, default: ContiguousArray(repeating: Row(), count: Int(Self.pageSize))][Int(id & (Self.pageSize - 1))] = row
        }
    }

    /// Every subscription's record, in ascending id order.
    func forEach(_ body: (_ id: Int64, _ row: Row) throws -> Void) rethrows {
        for page in pages.keys.sorted() {
            for (index, row) in pages[page]!.enumerated() where row.isPresent { try body((page << 12) + Int64(index), row) }
        }
    }

    /// Every subscription's id, ascending.
    var ids: [Int64] {
        var ids: [Int64] = []
        forEach { id, _ in ids.append(id) }
        return ids
    }
}
