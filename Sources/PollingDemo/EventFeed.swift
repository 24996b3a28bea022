import AsyncHTTPClient
import Foundation
import Logging
import StatusPolling
import Synchronization

/// `demo --events`: the outbox delivered to a loopback endpoint after each night's run, at the
/// night's clock (the endpoint fails 5 % and is down through one night); after the last night
/// the deliverer runs on until nothing is pending. Then every event the trail's changes wrote
/// must have arrived, each user's in the order written.
public final class EventFeed: Sendable {
    /// What the feed saw, for the summary.
    public struct Summary: Sendable {
        public var written = 0
        public var arrived = 0
        public var lost = 0
        public var outOfOrder = 0
        public var duplicates = 0
        public var requests = 0
        public var refused = 0
        public var badSignatures = 0
        /// The demo's clock from each event's writing to its arrival, ms, sorted.
        public var lagsMs: [Int64] = []
        /// Real time spent delivering, and the events delivered in it.
        public var deliveringSeconds = 0.0
        public var passed: Bool { lost == 0 && outOfOrder == 0 && badSignatures == 0 }
    }

    let sink: EventSink
    let deliverer: EventDeliverer
    let store: any PollingStore
    let downNight: Int?
    let policy: DeliveryPolicy
    let spent = Mutex(0.0)

    private init(sink: EventSink, deliverer: EventDeliverer, store: any PollingStore, downNight: Int?, policy: DeliveryPolicy) {
        self.sink = sink
        self.deliverer = deliverer
        self.store = store
        self.downNight = downNight
        self.policy = policy
    }

    static func withRunning<T: Sendable>(
        _ configuration: DemoConfiguration, store: any PollingStore, logger: Logger, _ body: (EventFeed) async throws -> T
    ) async throws -> T {
        let sink = try EventSink(seed: configuration.seed)
        return try await sink.withRunning(logger: logger) { port in
            var policy = DeliveryPolicy()
            policy.concurrency = 128
            let client = WebhookClient(connectionsPerEndpoint: policy.concurrency)
            var quiet = logger
            quiet.logLevel = .critical
            let endpoint = try WebhookEndpoint(name: "demo", url: "http://127.0.0.1:\(port)/events", secret: sink.secret)
            let deliverer = EventDeliverer(
                outbox: store, endpoints: [endpoint], policy: policy, owner: "demo", client: client, now: sink.now,
                random: SplitMix64(seed: configuration.seed), logger: quiet)
            let feed = EventFeed(sink: sink, deliverer: deliverer, store: store, downNight: configuration.eventsDownNight, policy: policy)
            do {
                let result = try await body(feed)
                try await client.shutdown()
                return result
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }

    /// After night `number`'s run: what is due at its clock goes out (nothing while the endpoint is down).
    func deliver(night number: Int, clockMs: Int64) async throws {
        sink.state.withLock {
            $0.clockMs = clockMs
            $0.down = number == downNight
        }
        try await timed { _ = try await deliverer.deliverDue() }
    }

    /// After the last night: the deliverer runs on, its clock moving a retry's longest delay at a
    /// time, until nothing is pending (at most a day).
    func drain(fromMs: Int64) async throws {
        var clock = fromMs
        for _ in 0..<48 {
            guard try await store.deliveryCounts()["pending", default: 0] > 0 else { return }
            clock += Int64(policy.maximumDelay.totalSeconds * 1000)
            sink.state.withLock {
                $0.clockMs = clock
                $0.down = false
            }
            try await timed { _ = try await deliverer.deliverDue() }
        }
    }

    private func timed(_ body: () async throws -> Void) async throws {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        spent.withLock { $0 += Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18 }
    }

    /// Every event written against what arrived.
    func summary() async throws -> Summary {
        let written = try await store.events(.all, limit: Int.max / 2).reversed()
        let s = sink.state.withLock { $0 }
        var summary = Summary(
            written: written.count, arrived: s.arrivals.count, duplicates: s.duplicates, requests: s.requests, refused: s.refused,
            badSignatures: s.badSignatures, deliveringSeconds: spent.withLock { $0 })
        let arrivalByID = Dictionary(s.arrivals.enumerated().map { ($1.eventID, ($0, $1)) }, uniquingKeysWith: { a, _ in a })
        var lastArrivalByUser: [String: Int] = [:]
        for event in written {
            guard let (index, arrival) = arrivalByID[event.eventID] else {
                summary.lost += 1
                continue
            }
            // Written in order: a user's later event must have arrived after the earlier ones.
            if let last = lastArrivalByUser[event.userID], index < last { summary.outOfOrder += 1 }
            lastArrivalByUser[event.userID] = index
            summary.lagsMs.append(arrival.atMs - event.atMs)
        }
        summary.lagsMs.sort()
        return summary
    }
}

extension EventFeed.Summary {
    /// The summary's lines.
    public func lines(downNight: Int?) -> [String] {
        func percentile(_ p: Double) -> Int64 { lagsMs.isEmpty ? 0 : lagsMs[min(lagsMs.count - 1, Int(Double(lagsMs.count) * p))] }
        func shown(_ ms: Int64) -> String {
            ms >= 86_400_000 ? String(format: "%.1f d", Double(ms) / 86_400_000)
                : ms >= 3_600_000 ? String(format: "%.1f h", Double(ms) / 3_600_000) : String(format: "%.1f s", Double(ms) / 1000)
        }
        let rate = deliveringSeconds > 0 ? Int(Double(arrived + duplicates) / deliveringSeconds) : 0
        return [
            "Outbound events: \(written.formatted()) written by the trail's changes, \(arrived.formatted()) arrived, each user's in order"
                + " (\(lost) lost, \(outOfOrder) out of order, \(duplicates) duplicates); \(requests.formatted()) requests, \(refused.formatted()) refused"
                + " by the endpoint (5 % failures\(downNight.map { ", down on night \($0)" } ?? "")), \(badSignatures) bad signatures.",
            "  Delivery lag on the demo's clock (delivered after each night's run; a retry waits its backoff): p50 \(shown(percentile(0.5))),"
                + " p95 \(shown(percentile(0.95))), max \(shown(lagsMs.last ?? 0)); delivering took \(String(format: "%.1f", deliveringSeconds)) s"
                + " of real time (\(rate.formatted()) deliveries/s).",
        ]
    }
}
