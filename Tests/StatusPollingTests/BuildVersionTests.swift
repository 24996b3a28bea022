import Foundation
import GRDB
import Testing

/// `status-poller --version` and the build it names in every run's report.
@Suite struct BuildVersionTests {
    func statusPoller(_ arguments: [String], environment: [String: String] = [:]) async throws -> StatusPollerProcess.Outcome {
        try await StatusPollerProcess.launch(arguments, environment: environment).outcome()
    }

    /// The three lines of `--version`, checked field by field.
    func version() async throws -> (release: String, commit: String, built: String) {
        let outcome = try await statusPoller(["--version"])
        #expect(outcome.status == 0)
        #expect(outcome.stderr.isEmpty)
        let lines = outcome.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 4 && lines[3].isEmpty, "three lines and a newline: \(lines)")
        guard lines.count >= 3 else { return ("", "", "") }
        #expect(lines[0].wholeMatch(of: /status-poller \d+\.\d+\.\d+([-+~][0-9A-Za-z.+~-]+)?/) != nil, "\(lines[0])")
        #expect(lines[1].wholeMatch(of: /commit ([0-9a-f]{7,40}(\+dirty)?|unknown)/) != nil, "\(lines[1])")
        #expect(lines[2].wholeMatch(of: /built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil, "\(lines[2])")
        return (String(lines[0].dropFirst("status-poller ".count)), String(lines[1].dropFirst("commit ".count)), String(lines[2].dropFirst("built ".count)))
    }

    @Test func versionPrintsTheReleaseTheCommitAndTheBuildDate() async throws {
        let (release, commit, built) = try await version()
        #expect(!release.isEmpty && !commit.isEmpty)
        let date = try #require(ISO8601DateFormatter().date(from: built))
        #expect(date <= Date().addingTimeInterval(60))
        // The root help offers it too.
        let help = try await statusPoller(["--help"])
        #expect(help.stdout.contains("--version"))
    }

    @Test func theRunReportAndTheRunHistoryNameTheBuild() async throws {
        let (release, commit, built) = try await version()
        try await withTemporaryDatabase { db in
            let run = try await statusPoller(
                ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--production-url", "http://127.0.0.1:9/verifyReceipt",
                 "--sandbox-url", "http://127.0.0.1:9/verifyReceipt", "--report", "json"],
                environment: ["APPSTORE_SHARED_SECRET": "s3cr3t"])
            #expect(run.status == 0, "\(run.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let expected = "\(release) (commit \(commit), built \(built))"
            #expect(report["version"] as? String == expected)
            let stored = try await db.webService.read { d in try String.fetchOne(d, sql: "SELECT report FROM poll_runs ORDER BY id DESC LIMIT 1") } ?? ""
            let history = try #require(try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [String: Any])
            #expect(history["version"] as? String == expected)
        }
    }
}
