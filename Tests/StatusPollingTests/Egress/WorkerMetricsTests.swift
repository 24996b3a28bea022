import Foundation
import ReceiverServer
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Several workers on one host: each writes its own metrics file, every series labelled with its
/// worker, so node_exporter's textfile collector reads them all and none overwrites another.
/// And the Grafana dashboard names only metrics that the code really writes.
@Suite struct WorkerMetricsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: [
        // (template, worker, named, path)
        ("/var/lib/node_exporter/textfile/status-poller.prom", nil, false, "/var/lib/node_exporter/textfile/status-poller.prom"),
        ("/var/lib/node_exporter/textfile/status-poller.prom", "db-host", false, "/var/lib/node_exporter/textfile/status-poller.prom"),
        ("/var/lib/node_exporter/textfile/status-poller.prom", "db-host-2", true, "/var/lib/node_exporter/textfile/status-poller-db-host-2.prom"),
        ("/tmp/sp-{worker}.prom", "a/b c", false, "/tmp/sp-a_b_c.prom"),
        ("/tmp/{worker}/metrics", "w.1", true, "/tmp/w.1/metrics"),
        ("metrics", "w1", true, "metrics-w1"),
        ("out/status.poller.prom", "é", true, "out/status.poller-_.prom"),
    ] as [(String, String?, Bool, String)])
    func aWorkerWritesAFileOfItsOwn(template: String, worker: String?, named: Bool, path: String) {
        #expect(MetricsFile.path(template, worker: worker, perWorker: named) == path)
    }

    static func report(verified: Int) -> RunReport {
        var report = RunReport(nowMs: 1_780_000_000_000, dryRun: false)
        report.selected = verified + 1
        report.verified = verified
        report.unchanged = verified
        report.failedByReason[.timeout] = 1
        report.failedByUpstreamStatus[UpstreamStatus(backend: .verifyReceipt, code: 21005)] = 1
        report.transitions[.renewed] = 2
        report.requests = verified + 3
        report.retries = 2
        report.throttled = 1
        report.lowestConcurrency = 8
        return report
    }

    @Test func twoWorkersWriteTwoFilesEachLabelledWithItsWorker() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let template = directory.appendingPathComponent("status-poller.prom").path
        for (worker, verified) in [("host-1", 7), ("host-2", 9)] {
            let path = MetricsFile.path(template, worker: worker, perWorker: true)
            try MetricsFile.write(Self.report(verified: verified), mode: .nightly, lastSuccessMs: 1_780_000_100_000, worker: worker, to: path)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["status-poller-host-1.prom", "status-poller-host-2.prom"])
        for (worker, verified) in [("host-1", 7), ("host-2", 9)] {
            let text = try String(contentsOfFile: directory.appendingPathComponent("status-poller-\(worker).prom").path, encoding: .utf8)
            let lines = Set(text.split(separator: "\n").map(String.init))
            #expect(lines.contains(#"status_poller_run_subscriptions{mode="nightly",worker="\#(worker)",outcome="verified"} \#(verified).0"#), "\(text)")
            #expect(lines.contains(#"status_poller_run_failures{mode="nightly",worker="\#(worker)",reason="timeout"} 1.0"#))
            #expect(lines.contains(#"status_poller_run_throttled{mode="nightly",worker="\#(worker)"} 1.0"#))
            #expect(lines.contains(#"status_poller_last_success_timestamp_seconds{mode="nightly",worker="\#(worker)"} 1780000100.0"#), "\(text)")
            // Every series of the file is this worker's.
            let series = lines.filter { $0.hasPrefix("status_poller_") }
            #expect(series.count > 20)
            #expect(series.allSatisfy { $0.contains(#"worker="\#(worker)""#) })
        }
        // Without a worker (SQLite), no label.
        try MetricsFile.write(Self.report(verified: 1), mode: .backfill, lastSuccessMs: nil, to: template)
        let single = try String(contentsOfFile: template, encoding: .utf8)
        #expect(single.contains(#"status_poller_run_requests{mode="backfill"} 4.0"#), "\(single)")
        #expect(!single.contains("worker="))
    }

    /// On SQLite `{worker}` is replaced too, and no series is labelled with a worker.
    @Test func aSQLiteRunReplacesWorkerInThePathWithoutALabel() async throws {
        try await withTemporaryDatabase { db in
            let template = db.directory.appendingPathComponent("sp-{worker}.prom").path
            let outcome = try await StatusPollerProcess.launch(
                ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--worker-name", "nightly-a", "--metrics-file", template,
                 "--production-url", "http://127.0.0.1:9/verifyReceipt", "--sandbox-url", "http://127.0.0.1:9/verifyReceipt", "--report", "json"],
                environment: ["APPSTORE_SHARED_SECRET": "s"]
            ).outcome()
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let text = try String(contentsOfFile: db.directory.appendingPathComponent("sp-nightly-a.prom").path, encoding: .utf8)
            #expect(text.contains(#"status_poller_run_subscriptions{mode="nightly",outcome="selected"} 0.0"#), "\(text)")
            #expect(!text.contains("worker="))
        }
    }

    /// Names of the series a Prometheus text holds (`_bucket`, `_sum` and `_count` included).
    static func names(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            line.prefix { $0.isLetter || $0.isNumber || $0 == "_" }.description
        }.filter { !$0.isEmpty })
    }

    /// Every metric the run and the receiver can write, read from their real output.
    static func writtenNames() throws -> Set<String> {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID().uuidString).prom").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try MetricsFile.write(report(verified: 3), mode: .nightly, lastSuccessMs: 1, worker: "w", to: file)
        let receiver = ReceiverMetrics()
        receiver.record(.accepted(.applied, version: 2, type: "DID_RENEW"), took: .milliseconds(3))
        receiver.record(.unavailable("down"), took: .milliseconds(3))
        let events = EventMetrics()
        events.update(counts: ["pending": 1])
        return names(try String(contentsOfFile: file, encoding: .utf8)).union(names(receiver.text())).union(names(events.text()))
    }

    @Test func theRunWritesExactlyTheMetricsItLists() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("list-\(UUID().uuidString).prom").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try MetricsFile.write(Self.report(verified: 3), mode: .nightly, lastSuccessMs: 1, to: file)
        #expect(Self.names(try String(contentsOfFile: file, encoding: .utf8)) == MetricsFile.metricNames)
    }

    @Test func theGrafanaDashboardNamesOnlyMetricsThatExist() throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("docs/grafana/status-poller.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let variables = ((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(variables == ["datasource", "worker", "mode", "receiver_job"])
        let panels = try #require(dashboard["panels"] as? [[String: Any]]).filter { $0["type"] as? String != "row" }
        #expect(panels.count == 17)
        let written = try Self.writtenNames()
        var used: Set<String> = []
        for panel in panels {
            let exprs = (panel["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }
            #expect(!exprs.isEmpty, "\(panel["title"] ?? "")")
            #expect((panel["datasource"] as? [String: String])?["uid"] == "${datasource}")
            for expr in exprs {
                let names = expr.matches(of: /status_poller_[a-z_]+/).map { String($0.output) }
                #expect(!names.isEmpty, "\(expr)")
                for name in names {
                    #expect(written.contains(name), "\(panel["title"] ?? ""): \(name) is not written by the code")
                    used.insert(name)
                }
                if names.contains(where: { MetricsFile.metricNames.contains($0) }) {
                    #expect(expr.contains(#"worker=~"$worker""#), "\(expr)")
                }
            }
        }
        // Every run metric and every event metric is on the dashboard.
        #expect(MetricsFile.metricNames.subtracting(used) == [])
        #expect(EventMetrics.metricNames.filter { name in !used.contains { $0 == name || $0 == name + "_bucket" } } == [])
    }
}
