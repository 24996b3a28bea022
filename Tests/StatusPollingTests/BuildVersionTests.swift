import Foundation
import GRDB
import Testing

/// `status-poller --version` and the build it names in every run's report; the secrets from
/// systemd's credentials (`$CREDENTIALS_DIRECTORY`), as the packaged units hand them over.
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
            let column = try await db.webService.read { d in try String.fetchOne(d, sql: "SELECT version FROM poll_runs ORDER BY id DESC LIMIT 1") }
            #expect(column == expected)
            #expect(try await db.store.runs(last: 1).first?.version == expected)
        }
    }

    @Test func theSecretsComeFromSystemdCredentialsWhenNothingElseGivesThem() async throws {
        let credentials = FileManager.default.temporaryDirectory.appendingPathComponent("sp-credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: credentials) }
        let secretFile = credentials.appendingPathComponent("shared-secret")
        let keyFile = credentials.appendingPathComponent("private-key")
        let environment = ["CREDENTIALS_DIRECTORY": credentials.path]
        try await withTemporaryDatabase { db in
            let run = ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--production-url", "http://127.0.0.1:9/verifyReceipt",
                       "--sandbox-url", "http://127.0.0.1:9/verifyReceipt", "--report", "json"]
            // An empty credential (the package's placeholder) is no secret, and the error says where it goes.
            try Data().write(to: secretFile)
            let empty = try await statusPoller(run, environment: environment)
            #expect(empty.status == 2)
            #expect(empty.stderr.contains("no App Store shared secret. Set APPSTORE_SHARED_SECRET or pass --shared-secret-file PATH"))
            #expect(empty.stderr.contains("LoadCredential=shared-secret:FILE"))

            try Data("s3cr3t\n".utf8).write(to: secretFile)
            let fromCredential = try await statusPoller(run, environment: environment)
            #expect(fromCredential.status == 0, "\(fromCredential.stderr)")
            #expect(!fromCredential.stdout.contains("s3cr3t") && !fromCredential.stderr.contains("s3cr3t"))

            // The In-App Purchase key likewise: read from the credential (here not PEM, and so said).
            let serverAPI = ["run", "--database", db.path, "--bundle-id", "com.example.premium", "--backend", "server-api",
                             "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--key-id", "ABCDEFGHIJ"]
            try Data().write(to: keyFile)
            let noKey = try await statusPoller(serverAPI, environment: environment)
            #expect(noKey.status == 2)
            #expect(noKey.stderr.contains("no In-App Purchase key") && noKey.stderr.contains("LoadCredential=private-key:FILE"))
            try Data("MIGTAgEAMBMGByqGSM49\n".utf8).write(to: keyFile)
            let notPEM = try await statusPoller(serverAPI, environment: environment)
            #expect(notPEM.status == 2)
            #expect(notPEM.stderr.contains("the In-App Purchase key is not PEM text"))
            #expect(!notPEM.stderr.contains("MIGTAgEAMBMGByqGSM49"))
        }
    }
}
