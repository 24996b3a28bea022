import EntitlementCore
import Foundation
import Prometheus

/// The end-of-run metrics in Prometheus' text format, for node_exporter's textfile collector.
/// Written to a temporary file in the same directory and renamed, so the collector never reads
/// half a file. With several workers (PostgreSQL), every series carries `worker="NAME"` and each
/// worker writes a file of its own (``path(_:worker:perWorker:)``), so none overwrites another's.
public enum MetricsFile {
    /// The names of every metric ``write(_:mode:lastSuccessMs:worker:to:)`` can emit, for dashboards and their checks.
    public static let metricNames: Set<String> = [
        "status_poller_run_duration_seconds", "status_poller_run_exit_code", "status_poller_run_timestamp_seconds",
        "status_poller_last_success_timestamp_seconds", "status_poller_run_subscriptions", "status_poller_run_failures",
        "status_poller_run_apple_status", "status_poller_run_transitions", "status_poller_run_selected_lapsed",
        "status_poller_run_skipped_fresh", "status_poller_run_requests", "status_poller_run_retries", "status_poller_run_throttled",
        "status_poller_run_lowest_concurrency",
    ]

    /// Where a worker's metrics go: `{worker}` in `template` becomes the worker's name (letters,
    /// digits, `.`, `_` and `-` kept, anything else `_`); without it, `perWorker` puts `-NAME`
    /// before the extension (`status-poller.prom` → `status-poller-NAME.prom`); otherwise the
    /// template as it is.
    public static func path(_ template: String, worker: String?, perWorker: Bool) -> String {
        guard let worker else { return template }
        let safe = String(worker.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        if template.contains("{worker}") { return template.replacingOccurrences(of: "{worker}", with: safe) }
        guard perWorker else { return template }
        let url = URL(fileURLWithPath: template)
        let ext = url.pathExtension
        let base = ext.isEmpty ? url.lastPathComponent : String(url.lastPathComponent.dropLast(ext.count + 1))
        let name = base + "-" + safe + (ext.isEmpty ? "" : "." + ext)
        return template.hasSuffix(url.lastPathComponent) ? String(template.dropLast(url.lastPathComponent.count)) + name : name
    }

    /// Writes `report` as the last run's metrics, labelled with `mode` and, with several workers, `worker`.
    public static func write(_ report: RunReport, mode: RunMode, lastSuccessMs: Int64?, worker: String? = nil, to path: String) throws {
        let registry = PrometheusCollectorRegistry()
        let m = [("mode", mode.rawValue)] + (worker.map { [("worker", $0)] } ?? [])
        registry.makeGauge(name: "status_poller_run_duration_seconds", labels: m, help: "Duration of the last run.").set(report.durationSeconds)
        registry.makeGauge(name: "status_poller_run_exit_code", labels: m, help: "Exit code of the last run.").set(Double(report.exitCode.rawValue))
        registry.makeGauge(name: "status_poller_run_timestamp_seconds", labels: m, help: "When the last run ended.").set(Date().timeIntervalSince1970)
        if let lastSuccessMs {
            registry.makeGauge(name: "status_poller_last_success_timestamp_seconds", labels: m, help: "When the last run that verified every selected subscription ended.")
                .set(Double(lastSuccessMs) / 1000)
        }
        let outcomes: [(String, Int)] = [
            ("selected", report.selected), ("verified", report.verified), ("updated", report.updated),
            ("unchanged", report.unchanged), ("superseded", report.superseded), ("failed", report.failed),
        ]
        for (outcome, count) in outcomes {
            registry.makeGauge(name: "status_poller_run_subscriptions", labels: m + [("outcome", outcome)], help: "Subscriptions of the last run, by outcome.")
                .set(Double(count))
        }
        for reason in VerificationFailure.Reason.allCases {
            registry.makeGauge(name: "status_poller_run_failures", labels: m + [("reason", reason.rawValue)], help: "Failed verifications of the last run, by reason.")
                .set(Double(report.failedByReason[reason, default: 0]))
        }
        for (status, count) in report.failedByAppleStatus {
            registry.makeGauge(name: "status_poller_run_apple_status", labels: m + [("status", String(status))], help: "Final Apple statuses of failed verifications in the last run.")
                .set(Double(count))
        }
        for (transition, count) in report.transitions {
            registry.makeGauge(name: "status_poller_run_transitions", labels: m + [("transition", transition.rawValue)], help: "Entitlement changes of the last run.")
                .set(Double(count))
        }
        registry.makeGauge(name: "status_poller_run_selected_lapsed", labels: m, help: "Lapsed subscriptions the last run asked about on their turn in the lapsed sweep.")
            .set(Double(report.selectedLapsed))
        registry.makeGauge(name: "status_poller_run_skipped_fresh", labels: m, help: "Subscriptions in a window the last run left out because their Apple data was fresh.")
            .set(Double(report.skippedFresh))
        registry.makeGauge(name: "status_poller_run_requests", labels: m, help: "Requests sent to the App Store in the last run.").set(Double(report.requests))
        registry.makeGauge(name: "status_poller_run_retries", labels: m, help: "Retries in the last run.").set(Double(report.retries))
        registry.makeGauge(name: "status_poller_run_throttled", labels: m, help: "Answers in the last run that said the App Store was overloaded (429, 5xx, retryable statuses).")
            .set(Double(report.throttled))
        registry.makeGauge(name: "status_poller_run_lowest_concurrency", labels: m, help: "The lowest concurrency the last run backed off to.")
            .set(Double(report.lowestConcurrency))

        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        try Data(registry.emitToBuffer()).write(to: temporary)
        guard rename(temporary.path, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot move the metrics file into place: \(reason)"])
        }
    }
}
