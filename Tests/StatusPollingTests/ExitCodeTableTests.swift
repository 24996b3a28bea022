import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The exit codes are defined once, in `RunExitCode`; the README's table and `--help` are that table.
@Suite struct ExitCodeTableTests {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    @Test func theReadmeTableIsTheLibrarysTable() throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "### Exit codes"))
        let table = lines[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        #expect(table.joined(separator: "\n") == RunExitCode.markdownTable)
    }

    @Test func helpListsEveryCodeOnce() {
        let lines = RunExitCode.helpTable.components(separatedBy: "\n")
        #expect(lines.first == "Exit codes:")
        #expect(lines.dropFirst().map { $0.split(separator: " ").first.map(String.init) } == ["0", "1", "2", "3", "4", "75"])
        #expect(lines[4] == "  3  run aborted: Apple answered 21004 (wrong shared secret), the App Store kept failing (the circuit breaker: most of the last subscriptions failed with timeouts, 5xx, outage pages or retryable statuses), or the database could not be read or written (a full disk, or held locked by another writer for more than the 10 s busy timeout) — no access was taken away; the next run picks up as usual")
    }
}
