import Foundation
import Logging
import Testing
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The Server API client over real HTTP against a scripted stand-in: mapping, the sandbox fallback,
/// every error code's handling, untrusted payloads. Waits are asserted as lower bounds only, so a
/// slow machine cannot fail them.
@Suite struct ServerAPIClientTests {
    let answers: ServerAPIAnswers
    let logger = Logger(label: "test")

    init() throws { answers = ServerAPIAnswers(pki: try TestPKI()) }

    func lookup(_ row: SubscriptionRow = ServerAPIAnswers.row(), rate: Int = 40, attempts: Int = 4, readHistory: Bool = false,
                _ script: (ScriptedServerAPI) async -> Void) async throws -> (StatusLookup, [ScriptedServerAPI.Received], Int) {
        try await ScriptedServerAPI.withServer { server, production, sandbox in
            await script(server)
            let configuration = try answers.configuration(production: production, sandbox: sandbox, rate: rate, attempts: attempts, readHistory: readHistory)
            return try await ServerAPIClient.withClient(configuration, jitter: { 0 }) { client in
                let result = try await client.status(of: row, logger: logger)
                return (result, await server.received, client.limiters.production.perSecond)
            }
        }
    }

    static func answer(_ lookup: StatusLookup) throws -> StatusAnswer {
        guard case .answered(let answer) = lookup.result else { Issue.record("not answered: \(lookup.result)"); throw CancellationError() }
        return answer
    }

    static func failure(_ lookup: StatusLookup) throws -> VerificationFailure {
        guard case .failed(let failure) = lookup.result else { Issue.record("not failed: \(lookup.result)"); throw CancellationError() }
        return failure
    }

    @Test func anAnswerDecidesIntoTheSameColumns() async throws {
        let entry = answers.lastTransaction("1000000100", status: 4, renewal: ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": 1_792_000_000_000, "expirationIntent": 2])
        let (result, received, _) = try await lookup { await $0.script("1000000100", [.json(answers.statuses([entry]))]) }
        let answer = try Self.answer(result)
        #expect(answer.upstreamStatus == .serverAPI(200))
        #expect(answer.environment == "Production")
        #expect(answer.latestReceipt == nil)
        #expect(result.stats.requests == 1)
        #expect(received.map(\.path) == ["/production/inApps/v1/subscriptions/1000000100"])
        #expect(received[0].authorization?.hasPrefix("Bearer ey") == true)
        #expect(received[0].authorization?.split(separator: ".").count == 3)
        let outcome = EntitlementDecision.decide(answer: answer, row: ServerAPIAnswers.row(), bundleID: ServerAPIAnswers.bundle)
        #expect(outcome == .adopt(SubscriptionState(
            originalTransactionID: "1000000100", productID: "com.example.premium.monthly", environment: "Production",
            expiresAt: 1_791_600_000_000, gracePeriodExpiresAt: 1_792_000_000_000, isInBillingRetry: true, autoRenewStatus: true,
            autoRenewProductID: "com.example.premium.yearly", expirationIntent: 2, cancelledAt: nil, transactionID: "1000000123",
            purchasedAt: 1_789_000_000_000), latestReceipt: nil))
    }

    @Test func aRefundSetsCancelledAt() async throws {
        let entry = answers.lastTransaction("1000000100", status: 5, transaction: ["revocationDate": 1_789_500_000_000], renewal: ["autoRenewStatus": 0])
        let (result, _, _) = try await lookup { await $0.script("1000000100", [.json(answers.statuses([entry]))]) }
        guard case .adopt(let state, _, _, _) = EntitlementDecision.decide(answer: try Self.answer(result), row: ServerAPIAnswers.row(), bundleID: ServerAPIAnswers.bundle) else {
            Issue.record("rejected"); return
        }
        #expect(state.cancelledAt == 1_789_500_000_000)
        #expect(state.autoRenewStatus == false)
    }

    /// 4040010 in production: the sandbox is asked, and the answer names the sandbox for the row.
    @Test func transactionIdNotFoundTriesTheSandbox() async throws {
        let entry = answers.lastTransaction("1000000100", environment: "Sandbox")
        let (result, received, _) = try await lookup { await $0.script("1000000100", environment: "sandbox", [.json(answers.statuses([entry], environment: "Sandbox"))]) }
        #expect(try Self.answer(result).environment == "Sandbox")
        #expect(received.map(\.environment) == ["production", "sandbox"])
        // A row known to be a sandbox one starts there.
        let (again, second, _) = try await lookup(ServerAPIAnswers.row(environment: "Sandbox")) {
            await $0.script("1000000100", environment: "sandbox", [.json(answers.statuses([entry], environment: "Sandbox"))])
        }
        #expect(try Self.answer(again).environment == "Sandbox")
        #expect(second.map(\.environment) == ["sandbox"])
        // Unknown in both: a final failure that names 4040010.
        let (neither, _, _) = try await lookup { _ in }
        let failure = try Self.failure(neither)
        #expect(failure.reason == .appleStatus)
        #expect(failure.upstreamStatus == .serverAPI(4_040_010))
        #expect(!failure.isTransient)
    }

    @Test(arguments: [4_040_002, 4_040_004, 4_040_006, 5_000_001])
    func retryableCodesAreRetried(code: Int) async throws {
        let http = code >= 5_000_000 ? 500 : 404
        let (result, received, _) = try await lookup {
            await $0.script("1000000100", [.http(http, body: #"{"errorCode":\#(code),"errorMessage":"try again"}"#), .json(answers.statuses([answers.lastTransaction("1000000100")]))])
        }
        _ = try Self.answer(result)
        #expect(received.count == 2)
        #expect(result.stats.retries == 1)
        #expect(result.stats.throttled == 1)
    }

    @Test func aRetryableCodeThatStaysFailsTransiently() async throws {
        let (result, received, _) = try await lookup(attempts: 3) {
            await $0.script("1000000100", [.http(500, body: #"{"errorCode":5000001,"errorMessage":"try again"}"#)])
        }
        let failure = try Self.failure(result)
        #expect(failure == VerificationFailure(.appleStatus, "Production Server API answered error 5000001", upstreamStatus: .serverAPI(5_000_001), httpStatus: 500, isTransient: true))
        #expect(received.count == 3)
    }

    /// 5000000 waits at least the long backoff (400 ms here) before asking again.
    @Test func generalInternalErrorWaitsLonger() async throws {
        let (result, received, _) = try await lookup {
            await $0.script("1000000100", [.http(500, body: #"{"errorCode":5000000,"errorMessage":"internal"}"#), .json(answers.statuses([answers.lastTransaction("1000000100")]))])
        }
        _ = try Self.answer(result)
        #expect(received.count == 2)
        #expect(received[1].at - received[0].at >= .milliseconds(400))
    }

    /// 429 with Apple's Retry-After (a UNIX time in ms): nothing is sent before that instant,
    /// however slowly the machine got there, and the rate halves.
    @Test func rateLimitedWaitsForRetryAfterAndHalvesTheRate() async throws {
        let until = Int64((Date().timeIntervalSince1970 + 1.5) * 1000)
        let (result, received, rate) = try await lookup {
            await $0.script("1000000100", [
                .http(429, body: #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#, headers: ["Retry-After": String(until)]),
                .json(answers.statuses([answers.lastTransaction("1000000100")])),
            ])
        }
        _ = try Self.answer(result)
        #expect(rate == 20)
        #expect(received.count == 2)
        // Retry-After is read to the millisecond against this machine's clock.
        #expect(received[1].arrived.timeIntervalSince1970 * 1000 >= Double(until - 1), "\(received[1].arrived.timeIntervalSince1970 * 1000) < \(until)")
    }

    /// A 429 from a front end, with no Apple body: still retried, still lowers the rate.
    @Test func aBare429AlsoHalvesTheRate() async throws {
        let (result, received, rate) = try await lookup {
            await $0.script("1000000100", [.http(429, body: "Too Many Requests", headers: ["Retry-After": "0"]), .json(answers.statuses([answers.lastTransaction("1000000100")]))])
        }
        _ = try Self.answer(result)
        #expect(received.count == 2)
        #expect(rate == 20)
    }

    @Test func unauthorizedStopsTheRun() async throws {
        let (result, received, _) = try await lookup { await $0.script("1000000100", [.http(401)]) }
        guard case .credentialsRejected(.credentialsRejected(let backend, let detail)) = result.result else { Issue.record("\(result.result)"); return }
        #expect(backend == .serverAPI)
        #expect(detail.hasPrefix("the App Store Server API (Production) answered 401: it refused the token."))
        #expect(received.count == 1)
    }

    @Test func anAppAppleRefusesStopsTheRun() async throws {
        let (result, _, _) = try await lookup { await $0.script("1000000100", [.http(404, body: #"{"errorCode":4040003,"errorMessage":"App not found."}"#)]) }
        guard case .credentialsRejected(.credentialsRejected(_, let detail)) = result.result else { Issue.record("\(result.result)"); return }
        #expect(detail.hasPrefix("the App Store Server API answered 4040003: it does not know the app com.example.premium."))
    }

    @Test func anotherCodeFailsTheRowAtOnce() async throws {
        let (result, received, _) = try await lookup { await $0.script("1000000100", [.http(400, body: #"{"errorCode":4000006,"errorMessage":"Invalid transaction id."}"#)]) }
        #expect(try Self.failure(result) == VerificationFailure(.appleStatus, "Production Server API answered error 4000006", upstreamStatus: .serverAPI(4_000_006), httpStatus: 400))
        #expect(received.count == 1)
    }

    /// A payload signed under another root fails the row; so does a tampered renewal info even
    /// when the transaction is fine: nothing of that answer is applied.
    @Test func untrustedPayloadsFailTheWholeRow() async throws {
        let stranger = ServerAPIAnswers(pki: try TestPKI(.init(rootName: "Another Root")))
        let (foreign, _, _) = try await lookup { await $0.script("1000000100", [.json(stranger.statuses([stranger.lastTransaction("1000000100")]))]) }
        let failure = try Self.failure(foreign)
        #expect(failure.reason == .untrustedSignature)
        #expect(failure.detail.hasPrefix("untrusted_signature (untrusted_root): "))
        var entry = answers.lastTransaction("1000000100")
        let parts = (entry["signedRenewalInfo"] as! String).split(separator: ".").map(String.init)
        let forged = TestPKI.base64URL(Data(answers.json(SignedPayloads.renewal(["originalTransactionId": "1000000100", "autoRenewStatus": 0])).utf8))
        entry["signedRenewalInfo"] = "\(parts[0]).\(forged).\(parts[2])"
        let (tampered, _, _) = try await lookup { await $0.script("1000000100", [.json(answers.statuses([entry]))]) }
        #expect(try Self.failure(tampered) == VerificationFailure(
            .untrustedSignature, "untrusted_signature (signature): the ES256 signature does not match the header and payload", upstreamStatus: .serverAPI(200)))
    }

    /// Backfills read every transaction of the chain, page after page.
    @Test func historyIsReadPageByPage() async throws {
        let first = answers.pki.sign(SignedPayloads.transaction(["transactionId": "1000000100", "expiresDate": 1_789_000_000_000]))
        let second = answers.pki.sign(SignedPayloads.transaction(["transactionId": "1000000123"]))
        let (result, received, _) = try await lookup(readHistory: true) {
            await $0.script("1000000100", [
                .json(answers.statuses([answers.lastTransaction("1000000100")])),
                .json(answers.json(["revision": "r1", "hasMore": true, "bundleId": ServerAPIAnswers.bundle, "environment": "Production", "signedTransactions": [first]])),
                .json(answers.json(["revision": "r2", "hasMore": false, "bundleId": ServerAPIAnswers.bundle, "environment": "Production", "signedTransactions": [second]])),
            ])
        }
        #expect(try Self.answer(result).transactions.map(\.transactionID) == ["1000000100", "1000000123"])
        #expect(received.map(\.path) == ["/production/inApps/v1/subscriptions/1000000100", "/production/inApps/v2/history/1000000100", "/production/inApps/v2/history/1000000100"])
        #expect(received.map(\.query) == ["", "sort=ASCENDING", "sort=ASCENDING&revision=r1"])
    }

    @Test func anotherAppAppleIdIsRefused() async throws {
        let body = answers.json(["environment": "Production", "bundleId": ServerAPIAnswers.bundle, "appAppleId": 42, "data": [["lastTransactions": [answers.lastTransaction("1000000100")]]]])
        let (result, _, _) = try await lookup { await $0.script("1000000100", [.json(body)]) }
        #expect(try Self.failure(result) == VerificationFailure(.bundleMismatch, "the answer is for appAppleId 42, expected 1234567890"))
    }
}
