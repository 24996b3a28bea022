import EntitlementCore
import Prometheus
import StatusPolling

/// The receiver's counters, served at `/metrics` in Prometheus' text format: notifications
/// received by version and type, what each came to, bodies refused by reason, writes the store
/// could not take, and how long requests took.
public final class ReceiverMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let duration: DurationHistogram

    public init() {
        duration = registry.makeDurationHistogram(
            name: "status_poller_notification_request_duration_seconds",
            buckets: [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                      .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10)],
            help: "Time from a notification's request to its answer, the commit included.")
        // Every outcome and reason from the start, so a dashboard sees zeros rather than gaps.
        for outcome in NotificationOutcome.allCases { outcomeCounter(outcome).increment(by: Int64(0)) }
        for reason in NotificationRefusal.Reason.allCases { refusedCounter(reason).increment(by: Int64(0)) }
        unavailableCounter.increment(by: Int64(0))
        for outcome in Self.consumptionOutcomes { consumptionCounter(outcome).increment(by: Int64(0)) }
    }

    /// What the consumption sender's passes did: answers sent (and of them late), refused by Apple,
    /// not sent for want of consent, expired, retried.
    static let consumptionOutcomes = ["sent", "late", "refused", "no_consent", "expired", "retried"]

    /// Counts one pass of the consumption sender.
    public func record(_ pass: ConsumptionPass) {
        for (outcome, count) in zip(Self.consumptionOutcomes, [pass.sent, pass.late, pass.refused, pass.noConsent, pass.expired, pass.retried]) where count > 0 {
            consumptionCounter(outcome).increment(by: Int64(count))
        }
    }

    private func consumptionCounter(_ outcome: String) -> Counter {
        registry.makeCounter(
            name: "status_poller_consumption_answers_total", labels: [("outcome", outcome)],
            help: "Refund requests (CONSUMPTION_REQUEST) answered: sent (Apple's 202), late (sent after the deadline), refused, no_consent, expired, retried.")
    }

    /// Counts one answered request.
    public func record(_ reply: NotificationReceiver.Reply, took elapsed: Duration) {
        duration.recordNanoseconds(Int64(elapsed.components.seconds) * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        switch reply {
        case .accepted(let outcome, let version, let type):
            registry.makeCounter(
                name: "status_poller_notifications_received_total", labels: [("version", String(version)), ("type", type)],
                help: "Notifications accepted, by version and notificationType.").increment()
            outcomeCounter(outcome).increment()
        case .refused(let refusal):
            refusedCounter(refusal.reason).increment()
        case .unavailable:
            unavailableCounter.increment()
        }
    }

    private func outcomeCounter(_ outcome: NotificationOutcome) -> Counter {
        registry.makeCounter(
            name: "status_poller_notifications_total", labels: [("outcome", outcome.rawValue)],
            help: "Notifications recorded, by what they did: applied, unchanged, stale, duplicate, unmatched, other_environment, conflict, ignored.")
    }

    private func refusedCounter(_ reason: NotificationRefusal.Reason) -> Counter {
        registry.makeCounter(name: "status_poller_notifications_refused_total", labels: [("reason", reason.rawValue)], help: "Bodies refused with a 4xx, by reason; nothing of them was stored.")
    }

    private var unavailableCounter: Counter {
        registry.makeCounter(name: "status_poller_notifications_unavailable_total", help: "Notifications answered 503 because the store could not take the write.")
    }

    /// The text `/metrics` serves.
    public func text() -> String { registry.emitToString() }
}
