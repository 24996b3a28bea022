@testable import AppStoreSimulator
import EntitlementCore
import Foundation
import PollingDemo
import StatusPolling
import Testing

/// `demo --workers N` and what the worker kill test reads: the reports worker processes hand back,
/// a night's sum of them, the option's checks, and the simulator's request log.
@Suite struct DemoWorkersTests {
    /// A report with every field the JSON carries set to something other than its default.
    static var sample: RunReport {
        var report = RunReport(nowMs: 1_767_582_000_000, dryRun: false)
        report.selected = 40
        report.verified = 35
        report.updated = 20
        report.unchanged = 15
        report.discovered = 2
        report.superseded = 1
        report.failedByReason = [.timeout: 2, .appleStatus: 3]
        report.failedByUpstreamStatus = [UpstreamStatus(backend: StatusBackend(rawValue: "verifyReceipt"), code: 21005): 3]
        report.transitions = [.renewed: 12, .firstVerified: 8]
        report.requests = 52
        report.retries = 12
        report.throttled = 4
        report.lowestConcurrency = 3
        report.durationSeconds = 1.25
        report.abandoned = 1
        report.checkpoint = 77
        return report
    }

    @Test func aWorkersJSONReportReadsBackAsTheSameReport() throws {
        let report = Self.sample
        #expect(try RunReport(workerJSON: Data(report.json().utf8)) == report)
        var aborted = report
        aborted.aborted = "circuit breaker tripped"
        aborted.interrupted = true
        #expect(try RunReport(workerJSON: Data(aborted.json().utf8)) == aborted)
        #expect(throws: (any Error).self) { try RunReport(workerJSON: Data("error: no".utf8)) }
    }

    @Test func aNightOfWorkersAddsTheirReportsUp() {
        var other = RunReport(nowMs: Self.sample.nowMs, dryRun: false)
        other.selected = 10
        other.verified = 10
        other.updated = 4
        other.unchanged = 6
        other.transitions = [.renewed: 4]
        other.lowestConcurrency = 8
        other.durationSeconds = 2
        let night = NightRun(nowMs: Self.sample.nowMs, workers: [.init(name: "a", report: Self.sample), .init(name: "b", report: other)])
        #expect(night.report.selected == 50)
        #expect(night.report.verified == 45)
        #expect(night.report.transitions == [.renewed: 16, .firstVerified: 8])
        #expect(night.report.failed == 5)
        #expect(night.report.lowestConcurrency == 3)
        #expect(night.report.durationSeconds == 2)
        #expect(night.exitCode == .someFailed)
        #expect(night.workers.map(\.name) == ["a", "b"])
    }

    @Test func severalWorkersNeedPostgreSQLAndAConcurrencyToShare() async throws {
        let sqlite = try await StatusPollerProcess.launch(["demo", "--workers", "2", "--database", "/nonexistent/demo.sqlite"], binary: StatusPollerProcess.demoBinary).outcome()
        #expect(sqlite.status == 2)
        #expect(sqlite.stderr.contains("--workers 2 needs a PostgreSQL --database"))
        let tooMany = try await StatusPollerProcess.launch(["demo", "--workers", "17", "--database", "postgres://poller@127.0.0.1:9/demo"], binary: StatusPollerProcess.demoBinary).outcome()
        #expect(tooMany.status == 2)
        #expect(tooMany.stderr.contains("--workers must be between 1 and 16."))
        let thin = try await StatusPollerProcess.launch(["demo", "--workers", "4", "--concurrency", "3", "--database", "postgres://poller@127.0.0.1:9/demo"], binary: StatusPollerProcess.demoBinary).outcome()
        #expect(thin.status == 2)
        #expect(thin.stderr.contains("give at least one per worker (4)"))
        let alone = try await StatusPollerProcess.launch(["demo", "--poller", "/usr/bin/true"], binary: StatusPollerProcess.demoBinary).outcome()
        #expect(alone.status == 2)
        #expect(alone.stderr.contains("--poller names the workers' status-poller: it needs --workers 2 or more."))
    }

    /// The program a team installs carries no fake App Store: `simulate` and `demo` are
    /// status-poller-demo's, whose workers run the status-poller beside it.
    @Test func theSimulatorAndTheDemoAreAProgramOfTheirOwn() async throws {
        for command in ["simulate", "demo"] {
            let outcome = try await StatusPollerProcess.launch([command]).outcome()
            #expect(outcome.status == 2, "\(command)")
            #expect(outcome.stderr.contains("Unexpected argument '\(command)'"), "\(command): \(outcome.stderr)")
        }
        let help = try await StatusPollerProcess.launch(["--help"], binary: StatusPollerProcess.demoBinary).outcome()
        #expect(help.status == 0)
        for command in ["demo", "simulate", "notifications"] { #expect(help.stdout.contains("  \(command) "), "\(command)") }
    }

    @Test func theRequestLogNamesTheSubscriberAndTheClientButNeverTheReceipt() throws {
        let start: Int64 = 1_767_582_000_000
        let simulator = AppStoreSimulator(population: Population(PopulationConfiguration(subscribers: 3, seed: 7, startMs: start)))
        let receipt = simulator.enrolment(at: start)[1].receipt
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("request-log-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try RequestLog(path: path)
        let body = try JSONSerialization.data(withJSONObject: ["receipt-data": receipt, "password": simulator.population.configuration.sharedSecret])
        let started = RequestLog.now()
        log.record(startMicros: started, client: "p1-w1", environment: .production, body: body,
                   answer: simulator.answer(environment: .production, body: body), simulator: simulator)
        log.record(startMicros: started, client: nil, environment: .sandbox, body: Data("not json".utf8),
                   answer: simulator.answer(environment: .sandbox, body: Data("not json".utf8)), simulator: simulator)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 2)
        #expect(lines[0]?["user_id"] as? String == "sim-user-2")
        #expect(lines[0]?["client"] as? String == "p1-w1")
        #expect(lines[0]?["outcome"] as? String == "status_0")
        #expect((lines[0]?["end_us"] as? Int64 ?? 0) >= started)
        #expect(lines[1]?["user_id"] == nil)
        #expect(lines[1]?["outcome"] as? String == "status_21000")
        #expect(!text.contains(receipt) && !text.contains(String(receipt.prefix(40))))
        #expect(!text.contains(simulator.population.configuration.sharedSecret))
    }
}
