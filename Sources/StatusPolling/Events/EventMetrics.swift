import Prometheus

/// The deliverer's counters, in Prometheus' text format (the `/metrics` of `events deliver
/// --metrics-port`, or a textfile): deliveries delivered, retried and dead-lettered by endpoint,
/// the pending backlog, and the lag from an event's writing to its delivery.
public final class EventMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let lag: DurationHistogram
    private let now: @Sendable () -> Int64

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), now: @escaping @Sendable () -> Int64 = EventDeliverer.wallClock) {
        self.registry = registry
        self.now = now
        lag = registry.makeDurationHistogram(
            name: "status_poller_event_delivery_lag_seconds",
            buckets: [.milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
                      .seconds(30), .seconds(300), .seconds(3600), .seconds(21_600), .seconds(86_400)],
            help: "Time from an event's writing (the change's commit) to its delivery's 2xx.")
        for state in ["pending", "delivered", "dead"] { pending(state).set(Int64(0)) }
    }

    /// Counts one batch's outcomes, by endpoint-less totals (an endpoint's own are in `events list`).
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
