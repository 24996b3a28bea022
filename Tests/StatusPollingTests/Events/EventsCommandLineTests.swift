import AsyncHTTPClient
import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// `status-poller events` as an operator runs it: `deliver --once` from cron to an endpoint of the
/// config file whose secret is in a file, `list` and `replay`; the secret and the bodies never
/// show in the output.
@Suite struct EventsCommandLineTests {
    func statusPoller(_ arguments: [String]) async throws -> StatusPollerProcess.Outcome {
        try await StatusPollerProcess.launch(arguments).outcome()
    }

    /// A verified row of user `u-USER` (so one `initial_purchase` event) and a config file naming
    /// the hook as endpoint `web`, its secret in a file; the two files' paths.
    static func prepare(_ db: TemporaryDatabase, hook: WebhookHook, port: Int, user: String) async throws -> (config: String, secretFile: String) {
        let id = try db.insert(userID: "u-\(user)", receipt: "R-\(user)")
        let state = SubscriptionState(
            originalTransactionID: "otid-\(user)", productID: "premium.monthly", environment: "Production", expiresAt: AppleJSON.t0 + 30 * AppleJSON.day)
        _ = try await db.store.recordVerified(VerifiedUpdate(
            subscriptionID: id, receiptSent: "R-\(user)", state: state, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid),
            verifiedAtMs: EventDeliverer.wallClock()))
        let secretFile = db.directory.appendingPathComponent("web.whsec").path
        try Data((hook.secretText + "\n").utf8).write(to: URL(fileURLWithPath: secretFile))
        let config = db.directory.appendingPathComponent("config.json").path
        try Data("""
            {"event_endpoints": {"web": {"url": "http://127.0.0.1:\(port)/hook", "secret_file": "\(secretFile)"}}}
            """.utf8).write(to: URL(fileURLWithPath: config))
        return (config, secretFile)
    }

    @Test func deliverOnceListAndReplay() async throws {
        try await withTemporaryDatabase { db in
            let hook = try WebhookHook(clockMs: EventDeliverer.wallClock())
            try await withLoopbackServer(hook.router) { port in
                let (config, secretFile) = try await Self.prepare(db, hook: hook, port: port, user: "cli")
                let deliver = try await statusPoller(["events", "deliver", "--once", "--database", db.path, "--config", config])
                #expect(deliver.status == 0, "\(deliver.stderr)")
                #expect(deliver.stdout == "events: 1 new, 1 delivered, 0 to retry, 0 dead-lettered, 0 pruned\n")
                let accepted = hook.accepted.withLock { $0 }
                #expect(accepted.map(\.userID) == ["u-cli"])
                let eventID = try #require(accepted.first?.id)

                let list = try await statusPoller(["events", "list", "--database", db.path])
                #expect(list.status == 0)
                #expect(list.stdout.contains(eventID))
                #expect(list.stdout.contains("initial_purchase"))
                #expect(list.stdout.contains("delivered"))
                #expect(!list.stdout.contains("otid-cli"), "never a body")

                let replay = try await statusPoller(["events", "replay", "--database", db.path, "--id", eventID])
                #expect(replay.status == 0)
                #expect(replay.stdout.hasPrefix("1 delivery pending again"))
                let again = try await statusPoller(["events", "deliver", "--once", "--database", db.path, "--config", config])
                #expect(again.stdout == "events: 0 new, 1 delivered, 0 to retry, 0 dead-lettered, 0 pruned\n")
                #expect(hook.accepted.withLock { $0.map(\.id) } == [eventID, eventID])

                // Down: exit 1, the event pending for a retry.
                hook.status.withLock { $0 = 503 }
                _ = try await statusPoller(["events", "replay", "--database", db.path, "--since", "2020-01-01T00:00:00Z"])
                let down = try await statusPoller(["events", "deliver", "--once", "--database", db.path, "--config", config])
                #expect(down.status == 1)
                #expect(down.stdout == "events: 0 new, 0 delivered, 1 to retry, 0 dead-lettered, 0 pruned\n")
                let pending = try await statusPoller(["events", "list", "--pending", "--database", db.path])
                #expect(pending.stdout.contains("HTTP 503"))
                for output in [deliver, list, replay, again, down, pending] {
                    #expect(!(output.stdout + output.stderr).contains(hook.secretText))
                    #expect(!(output.stdout + output.stderr).contains("\"data\""))
                }

                // The service form: delivers what comes until SIGTERM, then exits 0.
                hook.status.withLock { $0 = nil }
                _ = try await statusPoller(["events", "replay", "--database", db.path, "--since", "2020-01-01T00:00:00Z"])
                let service = try await StatusPollerProcess.launch(["events", "deliver", "--database", db.path, "--config", config])
                try await hook.waitForAccepted(3)
                service.signal(SIGTERM)
                let stopped = try await service.outcome()
                #expect(stopped.status == 0, "\(stopped.stderr)")
                #expect(stopped.stdout == "delivering events to web until SIGTERM\n")

                // No endpoint, or an endpoint over plain HTTP elsewhere than loopback: a configuration error.
                try Data(#"{"event_endpoints": {"web": {"url": "http://example.com/hook", "secret_file": "\#(secretFile)"}}}"#.utf8)
                    .write(to: URL(fileURLWithPath: config))
                let insecure = try await statusPoller(["events", "deliver", "--once", "--database", db.path, "--config", config])
                #expect(insecure.status == 2)
                #expect(insecure.stderr.contains("HTTPS only"))
            }
        }
    }

    /// `notifications serve` with endpoints configured runs the deliverer beside the receiver, and
    /// the receiver's `/metrics` carries the deliverer's counters and backlog.
    @Test func theReceiverServesTheDeliverersMetrics() async throws {
        try await withTemporaryDatabase { db in
            let hook = try WebhookHook(clockMs: EventDeliverer.wallClock())
            try await withLoopbackServer(hook.router) { port in
                let (config, _) = try await Self.prepare(db, hook: hook, port: port, user: "metrics")
                let receiver = try await StatusPollerProcess.launch([
                    "notifications", "serve", "--database", db.path, "--config", config, "--listen", "127.0.0.1:0", "--bundle-id", SignedPayloads.bundle,
                    "--app-apple-id", "1",
                ])
                let receiverPort = try await ReceiverCommandLineTests().port(of: receiver)
                try await hook.waitForAccepted(1)
                let client = HTTPClient(eventLoopGroupProvider: .singleton)
                var metrics = ""
                // The counter moves when the outcome is recorded, just after the endpoint's 2xx.
                let counted = try await eventually {
                    metrics = try await ServerAPITestKit.get(client, "http://127.0.0.1:\(receiverPort)/metrics", token: nil).body
                    return metrics.contains("status_poller_event_deliveries_total{outcome=\"delivered\"} 1")
                }
                try await client.shutdown()
                receiver.signal(SIGTERM)
                let stopped = try await receiver.outcome()
                #expect(counted, "\(metrics)")
                #expect(metrics.contains("status_poller_notification_request_duration_seconds"), "the receiver's own beside them")
                #expect(metrics.contains("status_poller_event_delivery_lag_seconds_count 1"))
                #expect(stopped.status == 0, "\(stopped.stderr)")
                #expect(hook.accepted.withLock { $0.map(\.userID) } == ["u-metrics"])
            }
        }
    }
}
