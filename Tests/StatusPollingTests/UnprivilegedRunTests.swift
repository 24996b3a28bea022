import Foundation
import GRDB
import SQLiteStore
import Testing

/// The nightly run as its units and its cron entry run it: as an unprivileged user (here `nobody`
/// when the tests run as root), which must reach the App Store like root does.
@Suite struct UnprivilegedRunTests {
    /// The keep-alive client once asked for `.socketOption(.tcp_nodelay)`: SOL_SOCKET option 1 is
    /// SO_DEBUG, which only a process with CAP_NET_ADMIN may set, so every connection of an
    /// unprivileged run failed with EACCES while root (the tests, the demo) never saw it.
    @Test
    func anUnprivilegedRunReachesTheAppStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-unprivileged-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("subscriptions.sqlite").path
        let (store, _) = try SQLiteSubscriptionStore.migrate(path: path)
        try store.close()
        let queue = try DatabaseQueue(path: path)
        try await queue.write { try $0.execute(sql: "INSERT INTO subscriptions (user_id, latest_receipt) VALUES ('u1', 'R-ok')") }
        try queue.close()
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path)

        try await ScriptedAppStore.withServer { server, production, sandbox in
            await server.script("R-ok", [.json(AppleJSON.valid(transactions: [AppleJSON.Transaction()], renewals: []))])
            let outcome = try await StatusPollerProcess.launch(
                ["run", "--database", path, "--bundle-id", AppleJSON.bundleID, "--now", "2026-01-29T00:00:00Z",
                 "--production-url", production, "--sandbox-url", sandbox, "--report", "json"],
                environment: ["APPSTORE_SHARED_SECRET": "s3cr3t"], unprivileged: true
            ).outcome()
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("Permission denied"))
            let report = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
            #expect(report["verified"] as? Int == 1)
        }
    }
}
