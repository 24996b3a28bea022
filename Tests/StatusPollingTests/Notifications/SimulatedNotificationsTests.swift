import AppStoreSimulator
import AsyncHTTPClient
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore
import Synchronization
import Testing

/// The simulator's notifications: one lifecycle event for every change of the truth, posted on
/// Apple's retry schedule with its faults, and read back by Get Notification History.
@Suite struct SimulatedNotificationsTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_790_000_000_000
    static let population = Population(PopulationConfiguration(subscribers: 600, seed: 5, startMs: start, horizonMs: start + 200 * day))

    /// Between two events of a chain nothing of its truth changes: an event for every change.
    @Test func everyChangeOfTheTruthHasItsEvent() throws {
        var kinds: [LifecycleEvent.Kind: Int] = [:]
        let all = Dictionary(grouping: Self.population.lifecycleEvents(after: 0, through: Self.start + 200 * Self.day), by: \.originalTransactionID)
        for subscriber in Self.population.subscribers {
            for chain in subscriber.chains {
                let events = all[chain.originalTransactionID] ?? []
                for event in events { kinds[event.kind, default: 0] += 1 }
                let moments = events.map(\.atMs) + [Self.start + 200 * Self.day]
                for (from, to) in zip(moments, moments.dropFirst()) where to - 1 > from {
                    // The receipt changes with the user's other chains too; the chain's own columns must not.
                    var first = subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: from)
                    var last = subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: to - 1)
                    first?.latestReceipt = ""
                    last?.latestReceipt = ""
                    #expect(first == last, "\(chain.originalTransactionID) changed between \(from) and \(to - 1) with no event")
                }
            }
        }
        // The population's rates reach every kind but a re-enabled auto-renewal (it draws none),
        // a billing failure without a grace period (the app has one), and the renewal-date
        // extensions (only an operator's request makes them).
        #expect(
            Set(kinds.keys) == Set(LifecycleEvent.Kind.allCases).subtracting([.autoRenewEnabled, .failedToRenew, .renewalExtended, .renewalExtensionFailed]),
            "\(kinds)")
    }

    /// Each kind names Apple's V2 type and subtype, and seed 004's V1 type where V1 has one.
    @Test func typesAreApples() {
        func event(_ kind: LifecycleEvent.Kind) -> LifecycleEvent { LifecycleEvent(kind: kind, atMs: 0, subscriberIndex: 0, originalTransactionID: "1") }
        #expect(event(.recovered).version2 == ("DID_RENEW", "BILLING_RECOVERY"))
        #expect(event(.recovered).version1 == "DID_RECOVER")
        #expect(event(.expiredAfterBillingRetry).version2 == ("EXPIRED", "BILLING_RETRY"))
        #expect(event(.expiredAfterBillingRetry).version1 == "DID_CHANGE_RENEWAL_STATUS")
        #expect(event(.gracePeriodExpired).version1 == nil)
        #expect(event(.subscribed).version2 == ("SUBSCRIBED", "INITIAL_BUY"))
        #expect(event(.refunded).version1 == "REFUND")
        #expect(event(.failedToRenew).version2 == ("DID_FAIL_TO_RENEW", nil))
        #expect(event(.failedToRenewInGracePeriod).version2 == ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"))
        #expect(event(.failedToRenewInGracePeriod).version1 == "DID_FAIL_TO_RENEW")
        #expect(event(.refundRequested).version2 == ("CONSUMPTION_REQUEST", nil))
        #expect(event(.refundDeclined).version2 == ("REFUND_DECLINED", nil))
        #expect(event(.refundedEarlierPeriod).version2 == ("REFUND", nil))
        #expect(event(.refundReversed).version2 == ("REFUND_REVERSED", nil))
        #expect(event(.earlierRefundReversed).version2 == ("REFUND_REVERSED", nil))
        #expect(event(.revoked).version2 == ("REVOKE", nil))
        #expect(event(.upgraded).version2 == ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"))
        #expect(event(.downgraded).version2 == ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"))
        // V1: REFUND for any refund, REVOKE for Family Sharing; no subscription CONSUMPTION_REQUEST,
        // no REFUND_DECLINED, no REFUND_REVERSED.
        #expect(event(.refundedEarlierPeriod).version1 == "REFUND")
        #expect(event(.revoked).version1 == "REVOKE")
        #expect(event(.upgraded).version1 == "INTERACTIVE_RENEWAL")
        for kind: LifecycleEvent.Kind in [.refundRequested, .refundDeclined, .refundReversed, .earlierRefundReversed] { #expect(event(kind).version1 == nil) }
    }

    /// A receiver that answers 503 twice and then 200: Apple's schedule (1 h, then 12 h after the
    /// previous try), the history lists the three attempts, and a lost try posts nothing.
    @Test func failedTriesAreRetriedOnApplesScheduleAndListedInTheHistory() async throws {
        let simulator = AppStoreSimulator(population: Self.population, clockMs: Self.start)
        simulator.sendNotifications(version: 2)
        let inbox = Inbox(answers: [503, 503])
        try await Self.withReceiver(inbox) { url in
            let pusher = NotificationPusher(simulator: simulator, url: url)
            let first = try #require(Self.population.lifecycleEvents(after: Self.start, through: Self.start + 200 * Self.day).first)
            // Through the first event's instant: only its first try (and any at the same instant).
            var statistics = await pusher.push(through: first.atMs)
            let record = try #require(simulator.notificationRecords.first { $0.event == first })
            #expect(record.attempts.map(\.result) == [.unsuccessfulHTTPResponseCode])
            statistics += await pusher.push(through: first.atMs + 3_600_000)
            statistics += await pusher.push(through: first.atMs + 13 * 3_600_000)
            let done = try #require(simulator.notificationRecords.first { $0.event == first })
            #expect(done.attempts == [
                SendAttempt(atMs: first.atMs, result: .unsuccessfulHTTPResponseCode),
                SendAttempt(atMs: first.atMs + 3_600_000, result: .unsuccessfulHTTPResponseCode),
                SendAttempt(atMs: first.atMs + 13 * 3_600_000, result: .success),
            ])
            #expect(done.nextAttemptMs == nil)
            #expect(statistics.refused == 2)
            simulator.setClock(first.atMs + 13 * 3_600_000)
            let request = Data(#"{"startDate":\#(first.atMs),"endDate":\#(first.atMs + 1)}"#.utf8)
            let history = simulator.answerNotificationHistory(environment: "Production", body: request, paginationToken: nil)
            #expect(history.status == 200)
            let page = try #require(try JSONSerialization.jsonObject(with: history.body) as? [String: Any])
            let records = try #require(page["notificationHistory"] as? [[String: Any]])
            let mine = records.filter { ($0["sendAttempts"] as? [[String: Any]])?.count == 3 }
            #expect(mine.count == 1)
            #expect((mine.first?["sendAttempts"] as? [[String: Any]])?.map { $0["sendAttemptResult"] as? String } == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"])
            #expect(inbox.arrivals.withLock { $0.filter { $0.contains("signedPayload") }.count } == statistics.posted)
        }
    }

    /// A receiver on loopback that answers the statuses in `answers` first, then 200, and keeps
    /// every body; `body` gets its URL.
    final class Inbox: Sendable {
        let answers: Mutex<[Int]>
        let arrivals = Mutex<[String]>([])
        init(answers: [Int] = []) { self.answers = Mutex(answers) }
    }

    static func withReceiver(_ inbox: Inbox, _ body: (String) async throws -> Void) async throws {
        let answers = inbox
        let arrivals = inbox
        let router = Router()
        router.post("notify") { request, _ -> Response in
            let received = try await request.body.collect(upTo: 1 << 20)
            arrivals.arrivals.withLock { $0.append(String(buffer: received)) }
            return Response(status: .init(code: answers.answers.withLock { $0.isEmpty ? 200 : $0.removeFirst() }))
        }
        let port = Mutex<Int?>(nil)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), onServerRunning: { channel in
            port.withLock { $0 = channel.localAddress?.port }
        })
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService() }
            while port.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
            try await body("http://127.0.0.1:\(port.withLock { $0! })/notify")
            group.cancelAll()
        }
    }

    /// `simulate --notify-url`: moving the clock posts the events of the days it skipped.
    @Test func theSimulatorCommandPostsAsItsClockMoves() async throws {
        let inbox = Inbox()
        try await Self.withReceiver(inbox) { url in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-notify-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let simulator = try await StatusPollerProcess.launch([
                "simulate", "--port", "0", "--subscribers", "50", "--start", "2026-01-01T00:00:00Z", "--key-dir", directory,
                "--notify-url", url, "--notify-version", "1",
            ], binary: StatusPollerProcess.demoBinary)
            #expect(try await eventually { simulator.stdoutSoFar.contains("/simulator/clock") })
            let clock = try #require(simulator.stdoutSoFar.split(separator: " ").first { $0.hasSuffix("/simulator/clock") })
            var request = HTTPClientRequest(url: "\(clock)?advance_days=20")
            request.method = .POST
            _ = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            #expect(try await eventually { inbox.arrivals.withLock { $0.count } >= 10 })
            // V1: the shared secret as password, seed 004's types.
            #expect(inbox.arrivals.withLock { $0.allSatisfy { $0.contains(#""password":"simulator-shared-secret""#) && $0.contains("notification_type") } })
            simulator.signal(SIGTERM)
            #expect(try await simulator.outcome().status == 0)
        }
    }

    @Test func theSimulatorCommandRefusesBadNotificationFlags() async throws {
        for (flags, message) in [
            (["--notify-url", "http://127.0.0.1:9/n", "--notify-version", "3"], "--notify-version must be 1 or 2, got 3."),
            (["--notify-url", "ftp://x"], "--notify-url must be an http:// or https:// URL, got 'ftp://x'."),
            (["--notify-fault", "lost=0.1"], "--notify-fault needs --notify-url."),
            (["--notify-url", "http://127.0.0.1:9/n", "--notify-fault", "eaten=0.1"], "--notify-fault takes KIND=RATE with KIND one of lost, duplicated, delayed"),
        ] {
            let outcome = try await StatusPollerProcess.launch(["simulate", "--port", "0"] + flags, binary: StatusPollerProcess.demoBinary).outcome()
            #expect(outcome.status == 2, "\(flags)")
            #expect(outcome.stderr.contains(message), "\(flags): \(outcome.stderr)")
        }
    }

    /// History pages hold 20 records; the token only works with the identical body.
    @Test func historyPagesNeedTheIdenticalBody() async throws {
        let simulator = AppStoreSimulator(population: Self.population, clockMs: Self.start)
        simulator.sendNotifications(version: 2, faults: NotificationFaults(lost: 1))
        let through = Self.start + 30 * Self.day
        while let attempt = simulator.nextNotificationAttempt(through: through) { simulator.recordNotificationAttempt(attempt, result: .noResponse) }
        simulator.setClock(through)
        let tried = simulator.notificationRecords.filter { !$0.attempts.isEmpty && $0.event.map { Self.population.subscribers[$0.subscriberIndex].environment == "Production" } == true }
        #expect(tried.count > 40)
        let body = Data(#"{"startDate":\#(Self.start),"endDate":\#(through + 1),"onlyFailures":true}"#.utf8)
        var token: String?
        var seen = 0
        repeat {
            let answer = simulator.answerNotificationHistory(environment: "Production", body: body, paginationToken: token)
            let page = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
            let records = try #require(page["notificationHistory"] as? [[String: Any]])
            #expect(records.count <= 20)
            seen += records.count
            token = page["paginationToken"] as? String
            #expect((page["hasMore"] as? Bool) == (token != nil))
            if let token {
                let other = Data(#"{"startDate":\#(Self.start),"endDate":\#(through + 1)}"#.utf8)
                let refused = simulator.answerNotificationHistory(environment: "Production", body: other, paginationToken: token)
                #expect(refused.status == 400)
                #expect(String(decoding: refused.body, as: UTF8.self).contains("4000017"))
            }
        } while token != nil
        #expect(seen == tried.count)
    }
}
