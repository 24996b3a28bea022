import Foundation
import Prometheus

/// The end-of-run metrics in Prometheus' text format, for node_exporter's textfile collector.
/// Written to a temporary file and renamed, so the collector never reads half a file.
public enum MetricsFile {
    public static func write(_ report: RunReport, mode: RunMode, lastSuccessMs: Int64?, to path: String) throws {
        let registry = PrometheusCollectorRegistry()
        let m = [("mode", mode.rawValue)]
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
