import Foundation
import Prometheus

/// The deliverer's metrics in Prometheus' text format, for node_exporter's textfile collector
/// (`events deliver --metrics-file`, rewritten every few seconds): deliveries delivered, retried
/// and dead-lettered, the backlog by state, and the lag from an event's writing to its delivery.
public final class EventMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let lag: DurationHistogram

    /// Where ``flush()`` writes the text; nil: nowhere (a caller reads ``text()``).
    public let file: String?

    /// The names of every metric it writes, for the dashboard's check.
    public static let metricNames: Set<String> = [
        "status_poller_event_deliveries_total", "status_poller_event_deliveries", "status_poller_event_delivery_lag_seconds",
    ]

    public init(file: String? = nil, registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        self.file = file
        lag = registry.makeDurationHistogram(
            name: "status_poller_event_delivery_lag_seconds",
            buckets: [.milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
                      .seconds(30), .seconds(300), .seconds(3600), .seconds(21_600), .seconds(86_400)],
            help: "Time from an event's writing (the change's commit) to its delivery's 2xx.")
        for state in ["pending", "delivered", "dead"] { pending(state).set(Int64(0)) }
        for outcome in ["delivered", "retried", "dead_lettered"] { counter(outcome).increment(by: Int64(0)) }
    }

    /// Writes the text to ``file`` through a temporary file and a rename, so the collector never
    /// reads half of it.
    public func flush() throws {
        guard let file else { return }
        let temporary = file + ".tmp-\(getpid())"
        try Data(text().utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, file) == 0 else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file])
        }
    }

    /// Counts one batch's outcomes, all endpoints together (an endpoint's own are in `events list`).
    func record(_ outcomes: [DeliveryOutcome], batch: [EventDelivery]) {
        let written = Dictionary(batch.map { ($0.outboxID, $0.writtenAtMs) }, uniquingKeysWith: { a, _ in a })
        for outcome in outcomes {
            switch outcome.result {
            case .delivered:
                counter("delivered").increment()
                if let at = written[outcome.outboxID] { lag.recordNanoseconds(max(0, outcome.atMs - at) * 1_000_000) }
            case .retry: counter("retried").increment()
            case .dead: counter("dead_lettered").increment()
            }
        }
    }

    /// The deliveries by state, from ``EventOutbox/deliveryCounts()``.
    public func update(counts: [String: Int]) {
        for (state, count) in counts where state != "events" { pending(state).set(Int64(count)) }
    }

    private func counter(_ outcome: String) -> Counter {
        registry.makeCounter(
            name: "status_poller_event_deliveries_total", labels: [("outcome", outcome)],
            help: "Delivery attempts by outcome: delivered (2xx), retried, dead_lettered.")
    }

    private func pending(_ state: String) -> Gauge {
        registry.makeGauge(name: "status_poller_event_deliveries", labels: [("state", state)], help: "Deliveries by state: pending, delivered, dead.")
    }

    /// The text `/metrics` serves.
    public func text() -> String { registry.emitToString() }
}
