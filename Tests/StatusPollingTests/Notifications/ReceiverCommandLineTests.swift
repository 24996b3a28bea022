import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// `status-poller notifications serve` as an operator runs it: the real binary, its flags and their
/// errors, and SIGTERM while a notification is being written — no new request is taken, the one in
/// flight finishes and is answered after its commit, nothing is half-written, exit 0.
@Suite struct ReceiverCommandLineTests {
    typealias Kit = SignedPayloads
    typealias Server = ReceiverServerTests

    func port(of receiver: StatusPollerProcess) async throws -> Int {
        var port: Int?
        _ = try await eventually {
            let line = receiver.stdoutSoFar.split(separator: "\n").first { $0.hasPrefix("listening on http://127.0.0.1:") }
            port = line.flatMap { Int($0.dropFirst("listening on http://127.0.0.1:".count).prefix { $0.isNumber }) }
            return port != nil
        }
        return try #require(port, "no address: \(receiver.stderrSoFar)")
    }

    /// The write is held by a PostgreSQL table lock, which the receiver waits out however long the
    /// test takes to send SIGTERM and see the listener close. (With SQLite the binary waits 10 s
    /// for a lock, and on a busy machine those steps took longer: a 503 instead of the commit.)
    @Test(.enabled(if: PostgresTestServer.url != nil, "needs the tests' PostgreSQL server (Scripts/test.sh starts one)"))
    func sigtermMidRequestFinishesItAndTakesNoNewOne() async throws {
        try await withStore(.postgres) { db in
            let pki = try TestPKI()
            let location = try #require(db.postgresLocation)
            let rootFile = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-root-\(UUID().uuidString).pem")
            defer { try? FileManager.default.removeItem(at: rootFile) }
            try pki.root.serializeAsPEM().pemString.write(to: rootFile, atomically: true, encoding: .utf8)
            let id = try await db.insert(userID: "u", receipt: "R", NotificationIngestTests.monthly)
            let receiver = try await StatusPollerProcess.launch([
                "notifications", "serve", "--database", location.name, "--listen", "127.0.0.1:0", "--bundle-id", Kit.bundle,
                "--app-apple-id", String(NotificationVerificationTests.appAppleID), "--trusted-root-file", rootFile.path, "--log-level", "trace",
            ], environment: ["PGPASSWORD": PostgresTestServer.password])
            let port = try await port(of: receiver)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Server.patientClient)
            let poster = Server.Poster(client: client, base: "http://127.0.0.1:\(port)")
            let body = Array(try JSONSerialization.data(withJSONObject: Server.signed(pki, uuid: "n-in-flight")))
            let answered = try await db.withWriteLockHeld { _, release in
                // The web service locks the subscriptions: the receiver verifies, then waits to commit.
                let inFlight = Task { try await poster.post(body) }
                #expect(try await eventually { receiver.stderrSoFar.contains("notification verified; recording it") })
                receiver.signal(SIGTERM)
                // The listener closes: a new connection is refused while the request in flight waits.
                #expect(try await eventually { !Self.acceptsConnections(port: port) })
                release()
                return try await inFlight.value
            }
            #expect(answered == (200, "{\"outcome\":\"applied\"}\n"))
            let outcome = try await receiver.outcome()
            #expect(outcome.status == 0, "\(outcome.stderr)")
            try await client.shutdown()
            #expect(try await db.store.subscription(id: id)?.state.expiresAt == 1_791_600_000_000)
            #expect(try await db.store.notifications(NotificationQuery()).map(\.outcome) == ["applied"])
        }
    }

    /// Whether something accepts a TCP connection on 127.0.0.1:`port` (a plain connect: an HTTP
    /// client's pool would retry a refused connection until its deadline).
    static func acceptsConnections(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    @Test func badFlagsAreRefusedWithOneMessageAndExit2() async throws {
        try await withStore(.sqlite) { db in
            let path = try #require(db.sqlitePath)
            let cases: [([String], String)] = [
                (["--listen", "localhost"], "error: --listen must be HOST:PORT such as 127.0.0.1:8080 or 0.0.0.0:8443, got 'localhost'.\n"),
                (["--listen", "0.0.0.0:8080", "--trusted-root-file", "/nonexistent.pem"],
                 "error: --trusted-root-file is only accepted while listening on a loopback address (a simulator), and --listen is 0.0.0.0.\n"),
                (["--tls-certificate-file", "/tmp/cert.pem"], "error: --tls-certificate-file and --tls-key-file go together.\n"),
                (["--max-body-bytes", "10"], "error: --max-body-bytes must be between 1024 and 67108864, got 10.\n"),
            ]
            for (flags, message) in cases {
                let outcome = try await StatusPollerProcess.launch(["notifications", "serve", "--database", path, "--bundle-id", Kit.bundle] + flags).outcome()
                #expect(outcome.status == 2, "\(flags)")
                #expect(outcome.stderr == message, "\(flags)")
                #expect(outcome.stdout == "", "\(flags)")
            }
            // An address that is not this host's: one message, exit 2, not a process left waiting.
            let unbindable = try await StatusPollerProcess.launch([
                "notifications", "serve", "--database", path, "--bundle-id", Kit.bundle, "--app-apple-id", "1", "--listen", "192.0.2.1:8080",
            ]).outcome()
            #expect(unbindable.status == 2)
            #expect(unbindable.stderr.hasPrefix("error: could not listen on 192.0.2.1:8080 ("), "\(unbindable.stderr)")
            #expect(unbindable.stderr.split(separator: "\n").count == 1)
            let missing = try await StatusPollerProcess.launch(["notifications", "serve", "--database", path]).outcome()
            #expect(missing.status == 2)
            #expect(missing.stderr.contains("--bundle-id"))
        }
    }

    @Test func listShowsWhatEachNotificationDid() async throws {
        try await withStore(.sqlite) { db in
            let pki = try TestPKI()
            let path = try #require(db.sqlitePath)
            let id = try await db.insert(userID: "u", receipt: "R", NotificationIngestTests.monthly)
            let ingest = NotificationIngest(bundleID: Kit.bundle)
            let renewed = try await NotificationIngestTests.received(pki, uuid: "n-renew", signedAt: Kit.signedDate, expires: 1_791_600_000_000, receivedAt: 1_790_000_001_000)
            let lost = try await NotificationIngestTests.received(
                pki, uuid: "n-other", signedAt: Kit.signedDate, expires: 1_791_600_000_000, receivedAt: 1_790_000_002_000)
            var orphan = lost
            orphan.originalTransactionID = "9999"
            _ = try await db.store.receive([renewed, orphan], ingest: ingest, nowMs: Kit.signedDate + 5_000)
            let text = try await StatusPollerProcess.launch(["notifications", "list", "--database", path]).outcome()
            #expect(text.status == 0)
            #expect(text.stdout == """
                received (UTC)         v  notification                         outcome            status     original_transaction_id  row       user
                2026-09-21 14:13:22    2 DID_RENEW                            unmatched          1          9999                     -         -
                2026-09-21 14:13:21    2 DID_RENEW                            applied            1          1000000100               \(String(id) + String(repeating: " ", count: 9 - String(id).count)) u

                """)
            let unmatched = try await StatusPollerProcess.launch(["notifications", "list", "--database", path, "--unmatched", "--format", "json"]).outcome()
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(unmatched.stdout.utf8)) as? [[String: Any]])
            #expect(rows.count == 1)
            #expect(rows.first?["notification_id"] as? String == "n-other")
            #expect(rows.first?["original_transaction_id"] as? String == "9999")
            #expect(rows.first?["outcome"] as? String == "unmatched")
            let history = try await StatusPollerProcess.launch(["history", "--database", path, "--user-id", "u"]).outcome()
            #expect(history.stdout.contains("renewed                expired → active   subscription \(id), notification DID_RENEW n-renew, Apple status notification 1\n"))
            let json = try await StatusPollerProcess.launch(["history", "--database", path, "--user-id", "u", "--format", "json"]).outcome()
            let events = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(events.map { $0["notification_type"] as? String } == ["DID_RENEW"])
            #expect(history.stdout.contains("notifications received (newest first):\n2026-09-21 14:13:21  DID_RENEW                            applied            subscription \(id), V2 push, id n-renew\n"))
        }
    }
}
