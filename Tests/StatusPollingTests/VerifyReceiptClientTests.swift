import Foundation
import Logging
import NIOHTTP1
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The client over real HTTP on loopback, against scripted answers.
@Suite struct VerifyReceiptClientTests {
    typealias T = AppleJSON.Transaction
    static let valid = AppleJSON.valid(transactions: [T()], renewals: [AppleJSON.Renewal()])

    /// Runs `body` against a scripted server with a client whose jitter is fixed and whose timeout
    /// never fires.
    func withClient<R: Sendable>(
        attempts: Int = 4, _ body: (ScriptedAppStore, VerifyReceiptClient) async throws -> R
    ) async throws -> R {
        try await ScriptedAppStore.withServer { server, production, sandbox in
            try await VerifyReceiptClient.withClient(VerifyReceiptTesting.configuration(production, sandbox, attempts: attempts), http: VerifyReceiptTesting.http, jitter: { 1.0 }) { client in
                try await body(server, client)
            }
        }
    }

    /// Runs `body` against a scripted server with two clients of two attempts on one connection
    /// pool: `strict` times out after `strictTimeout`, for requests the server never answers;
    /// `patient`'s timeout never fires, for answers that must be taken however slow the machine.
    func withClients<R: Sendable>(
        strictTimeout: Duration, _ body: (ScriptedAppStore, _ strict: VerifyReceiptClient, _ patient: VerifyReceiptClient) async throws -> R
    ) async throws -> R {
        try await ScriptedAppStore.withServer { server, production, sandbox in
            try await KeepAliveHTTPClient.withClient(VerifyReceiptTesting.http) { http in
                let strict = VerifyReceiptClient(
                    configuration: VerifyReceiptTesting.configuration(production, sandbox, attempts: 2, timeout: strictTimeout), http: http, jitter: { 1.0 })
                let patient = VerifyReceiptClient(configuration: VerifyReceiptTesting.configuration(production, sandbox, attempts: 2), http: http, jitter: { 1.0 })
                return try await body(server, strict, patient)
            }
        }
    }

    let logger = Logger(label: "test")

    func failure(_ verification: Verification) -> VerificationFailure? {
        if case .failed(let failure) = verification.result { return failure }
        return nil
    }

    func answer(_ verification: Verification) -> VerifyReceiptResponse? {
        if case .answered(let response) = verification.result { return response }
        return nil
    }

    /// iOS 6-style answers: `receipt.bid` instead of `bundle_id`, and 21006 with
    /// `latest_expired_receipt_info`. Refused with their own reason and what to do, asked once,
    /// never read as another app's receipt.
    @Test(arguments: [
        #"{"status": 0, "receipt": {"bid": "com.example.premium", "bvrs": "1.0", "original_transaction_id": "1000000001", "product_id": "premium.monthly", "expires_date": "1370000000000"}, "latest_receipt_info": {"bid": "com.example.premium", "original_transaction_id": "1000000001", "expires_date": "1370000000000"}, "latest_receipt": "OLD-STYLE"}"#,
        #"{"status": 21006, "receipt": {"bid": "com.example.premium", "original_transaction_id": "1000000001", "expires_date": "1370000000000"}, "latest_expired_receipt_info": {"bid": "com.example.premium", "original_transaction_id": "1000000001", "expires_date": "1370000000000"}}"#,
    ])
    func iOS6StyleAnswersAreRefusedWithTheirOwnReason(body: String) async throws {
        try await withClient { server, client in
            await server.script("R1", [.json(body)])
            let row = SubscriptionRow(id: 1, userID: "u1", latestReceipt: "R1", state: .unverified)
            let lookup = try await client.status(of: row, logger: logger)
            guard case .failed(let failure) = lookup.result else { Issue.record("expected a failure, got \(lookup.result)"); return }
            #expect(failure.reason == .legacyReceipt)
            #expect(failure.isTransient == false)
            #expect(failure.detail.hasPrefix("Apple answered for an iOS 6-style transaction receipt (receipt.bid, latest_expired_receipt_info), not an app receipt; have the app upload its app receipt"))
            #expect(await server.received.count == 1)
        }
    }

    @Test func sendsApplesRequestBodyToProductionFirst() async throws {
        try await withClient { server, client in
            await server.script("R1", [.json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(answer(verification)?.status == .valid)
            #expect(verification.stats == StatusLookup.Stats.with(requests: 1, retries: 0))
            #expect(await server.received == [.init(environment: "production", receipt: "R1", password: "shh-secret", excludeOldTransactions: true)])
        }
    }

    @Test func status21007GoesToSandboxWithoutCountingAsARetry() async throws {
        try await withClient { server, client in
            await server.script("R1", environment: "production", [.json(AppleJSON.status(21007))])
            await server.script("R1", environment: "sandbox", [.json(AppleJSON.valid(environment: "Sandbox", transactions: [T()], renewals: []))])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(answer(verification)?.environment == "Sandbox")
            #expect(verification.stats == .with(requests: 2, retries: 0))
            #expect(await server.received.map(\.environment) == ["production", "sandbox"])
        }
    }

    @Test func status21008GoesBackToProduction() async throws {
        try await withClient { server, client in
            await server.script("R1", environment: "sandbox", [.json(AppleJSON.status(21008, environment: "Sandbox"))])
            await server.script("R1", environment: "production", [.json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", startingIn: .sandbox, logger: logger)
            #expect(answer(verification)?.environment == "Production")
            #expect(await server.received.map(\.environment) == ["sandbox", "production"])
        }
    }

    @Test func endpointsThatBlameEachOtherDoNotLoop() async throws {
        try await withClient { server, client in
            await server.script("R1", environment: "production", [.json(AppleJSON.status(21007))])
            await server.script("R1", environment: "sandbox", [.json(AppleJSON.status(21008))])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(failure(verification)?.reason == .appleStatus)
            #expect(verification.stats.requests == 3)
        }
    }

    @Test(arguments: [21005, 21009, 21100, 21199])
    func tryAgainStatusesAreRetried(code: Int) async throws {
        try await withClient { server, client in
            await server.script("R1", [.json(AppleJSON.status(code)), .json(AppleJSON.status(code)), .json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(answer(verification)?.status == .valid)
            #expect(verification.stats == .with(requests: 3, retries: 2, throttled: 2))
        }
    }

    @Test(arguments: [("is-retryable", "true"), ("is_retryable", "1"), ("is_retryable", #""true""#)])
    func retryableFlagInEverySpellingIsRetried(key: String, value: String) async throws {
        try await withClient { server, client in
            await server.script("R1", [.json(AppleJSON.status(21150, retryFlag: (key, value))), .json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(answer(verification)?.status == .valid)
            #expect(verification.stats.retries == 1)
        }
    }

    @Test(arguments: [("is-retryable", "false"), ("is_retryable", "0"), ("is_retryable", #""false""#)])
    func explicitlyNotRetryableIsNotRetried(key: String, value: String) async throws {
        try await withClient { server, client in
            await server.script("R1", [.json(AppleJSON.status(21150, retryFlag: (key, value))), .json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(failure(verification) == VerificationFailure(.appleStatus, "Apple answered status 21150", upstreamStatus: .verifyReceipt(.init(rawValue: 21150))))
            #expect(verification.stats == .with(requests: 1, retries: 0))
        }
    }

    @Test(arguments: [21000, 21003, 21010])
    func permanentStatusesAreNotRetried(code: Int) async throws {
        try await withClient { server, client in
            await server.script("R1", [.json(AppleJSON.status(code)), .json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(failure(verification)?.upstreamStatus == .verifyReceipt(VerifyReceiptStatus(rawValue: code)))
            #expect(verification.stats == .with(requests: 1, retries: 0))
        }
    }

    @Test func malformedReceiptDataIsTriedOnceMoreThenFails() async throws {
        try await withClient { server, client in
            await server.script("R1", [.json(AppleJSON.status(21002))])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(failure(verification)?.upstreamStatus == .verifyReceipt(.malformedReceiptData))
            #expect(verification.stats == .with(requests: 2, retries: 1))
        }
    }

    @Test func sharedSecretMismatchAbortsAtOnce() async throws {
        try await withClient { server, client in
            await server.script("R1", [.json(AppleJSON.status(21004)), .json(Self.valid)])
            await #expect(throws: RunAbort.sharedSecretMismatch) { try await client.verify(receipt: "R1", logger: logger) }
            #expect(await server.received.count == 1)
        }
    }

    @Test func retriesStopAtMaxAttempts() async throws {
        try await withClient(attempts: 3) { server, client in
            await server.script("R1", [.json(AppleJSON.status(21005))])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(failure(verification)?.upstreamStatus == .verifyReceipt(.serverUnavailable))
            #expect(verification.stats == .with(requests: 3, retries: 2, throttled: 3))
        }
    }

    @Test(arguments: [503, 500, 429])
    func serverErrorsAndRateLimitsAreRetried(code: Int) async throws {
        try await withClient { server, client in
            await server.script("R1", [.http(code), .json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(answer(verification)?.status == .valid)
            #expect(verification.stats == .with(requests: 2, retries: 1, throttled: 1))
        }
    }

    @Test func retryAfterIsHonoured() async throws {
        try await withClient { server, client in
            await server.script("R1", [.http(429, headers: ["Retry-After": "0.25"]), .json(Self.valid)])
            let clock = ContinuousClock()
            let started = clock.now
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(answer(verification)?.status == .valid)
            #expect(clock.now - started >= .milliseconds(250))
        }
    }

    @Test func clientErrorsAreNotRetried() async throws {
        try await withClient { server, client in
            await server.script("R1", [.http(404, body: "not found"), .json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(failure(verification) == VerificationFailure(.httpStatus, "Production answered HTTP 404", httpStatus: 404))
            #expect(verification.stats.requests == 1)
        }
    }

    @Test func htmlOutagePageIsRetriedLikeA5xx() async throws {
        try await withClient(attempts: 2) { server, client in
            await server.script("R1", [.html, .json(Self.valid)])
            await server.script("R2", [.html])
            let recovered = try await client.verify(receipt: "R1", logger: logger)
            #expect(answer(recovered)?.status == .valid)
            #expect(recovered.stats == .with(requests: 2, retries: 1))
            let exhausted = try await client.verify(receipt: "R2", logger: logger)
            #expect(failure(exhausted)?.reason == .notJSON)
            #expect(failure(exhausted)?.httpStatus == 200)
        }
    }

    @Test func droppedConnectionIsRetried() async throws {
        try await withClient(attempts: 3) { server, client in
            await server.script("R1", [.drop, .json(Self.valid)])
            await server.script("R2", [.drop])
            let recovered = try await client.verify(receipt: "R1", logger: logger)
            #expect(answer(recovered)?.status == .valid)
            #expect(recovered.stats.retries == 1)
            let exhausted = try await client.verify(receipt: "R2", logger: logger)
            #expect(failure(exhausted)?.reason == .transport)
            #expect(exhausted.stats == .with(requests: 3, retries: 2))
        }
    }

    /// A request that gets no answer times out and is retried, and the retry's answer is taken.
    /// One timeout has both parts, so neither side may depend on the machine's speed. The first
    /// request is never answered, so the timeout fires on any machine. The retry goes out on a
    /// connection already open to a server that answers on the event loops (`EventLoopAppStore`):
    /// nothing between its deadline and its answer waits for the cooperative threads, which a
    /// busy test process can keep for minutes, so 60 s is far above any delay it can meet.
    @Test func slowAnswerTimesOutAndIsRetried() async throws {
        try await EventLoopAppStore.withServer { server, url in
            try await KeepAliveHTTPClient.withClient(VerifyReceiptTesting.http) { http in
                // Two connections kept open for R1's two requests: two answers, each held until
                // both were asked, through a client whose timeout never fires.
                let opener = VerifyReceiptClient(configuration: VerifyReceiptTesting.configuration(url, url), http: http, jitter: { 1.0 })
                server.script("W1", [.afterRequests(2, Self.valid)])
                server.script("W2", [.afterRequests(2, Self.valid)])
                async let first = opener.verify(receipt: "W1", logger: logger)
                async let second = opener.verify(receipt: "W2", logger: logger)
                #expect(try await [first, second].map { answer($0)?.status } == [.valid, .valid])

                let client = VerifyReceiptClient(
                    configuration: VerifyReceiptTesting.configuration(url, url, attempts: 2, timeout: .seconds(60)), http: http, jitter: { 1.0 })
                server.script("R1", [.never, .json(Self.valid)])
                let verification = try await client.verify(receipt: "R1", logger: logger)
                #expect(answer(verification)?.status == .valid)
                #expect(verification.stats == .with(requests: 2, retries: 1))
                #expect(server.requests(for: "R1") == 2)
            }
        }
        // Never answered at all: the last attempt's timeout is the failure. Nothing must come in
        // time here, so the timeout can be short.
        try await withClients(strictTimeout: .seconds(2)) { server, strict, _ in
            await server.script("R2", [.never])
            let exhausted = try await strict.verify(receipt: "R2", logger: logger)
            #expect(failure(exhausted)?.reason == .timeout)
            #expect(exhausted.stats == .with(requests: 2, retries: 1))
        }
    }

    @Test func refusedConnectionIsATransportFailure() async throws {
        // Port 9 (discard) on loopback has no listener here.
        let configuration = VerifyReceiptTesting.configuration("http://127.0.0.1:9/verifyReceipt", "http://127.0.0.1:9/verifyReceipt", attempts: 2)
        let verification = try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http, jitter: { 0 }) { client in
            try await client.verify(receipt: "R1", logger: logger)
        }
        #expect(failure(verification)?.reason == .transport)
        #expect(verification.stats == .with(requests: 2, retries: 1))
    }

    /// The deadline bounds the whole exchange: a body trickled a byte at a time, each byte well
    /// inside any idle timeout, still ends at the request timeout. The trickle never ends, so the
    /// short timeout fires on any machine.
    @Test func aTrickledBodyEndsAtTheRequestTimeout() async throws {
        try await withClients(strictTimeout: .seconds(3)) { server, strict, patient in
            await server.script("R1", [.trickle(.milliseconds(100))])
            let verification = try await strict.verify(receipt: "R1", logger: logger)
            #expect(failure(verification)?.reason == .timeout)
            #expect(verification.stats == .with(requests: 2, retries: 1))
            // The connection the trickle held was closed, not reused: the next answer, from the same
            // pool, is clean. It is asked with the patient timeout: it must come in time on any machine.
            await server.script("R2", [.json(Self.valid)])
            #expect(answer(try await patient.verify(receipt: "R2", logger: logger))?.status == .valid)
        }
    }

    @Test(arguments: [
        ("2.5", Duration?.some(.milliseconds(2500))), ("0", .some(.zero)), ("inf", nil), ("-1", nil), ("nan", nil),
        ("1e300", .some(.seconds(86_400))), ("9223372036854775807", .some(.seconds(86_400))),
        ("Wed, 21 Oct 2015 07:28:00 GMT", nil),
    ])
    func oddRetryAfterValuesNeverCrash(value: String, expected: Duration?) {
        #expect(VerifyReceiptClient.retryAfter(HTTPHeaders([("Retry-After", value)])) == expected)
    }

    @Test func unexpectedShapeFailsWithoutRetry() async throws {
        try await withClient { server, client in
            await server.script("R1", [.json(try Fixture.text("malformed-expires.json")), .json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(failure(verification)?.reason == .unexpectedResponse)
            #expect(verification.stats.requests == 1)
        }
    }

    @Test func deprecationHeadersAreReported() async throws {
        try await withClient { server, client in
            await server.setExtraHeaders(["Deprecation": "@1686528000", "Sunset": "Wed, 11 Nov 2026 00:00:00 GMT"])
            await server.script("R1", [.json(Self.valid)])
            let verification = try await client.verify(receipt: "R1", logger: logger)
            #expect(verification.stats.deprecation?.headers == "Deprecation: @1686528000, Sunset: Wed, 11 Nov 2026 00:00:00 GMT")
        }
    }

    @Test func sharedSecretIsRedactedInDescriptions() {
        let configuration = VerifyReceiptTesting.configuration("http://a", "http://b")
        #expect("\(configuration.sharedSecret)" == "<redacted>")
        #expect(!String(describing: configuration).contains("shh-secret"))
        #expect(!String(reflecting: configuration.sharedSecret).contains("shh-secret"))
    }
}

extension StatusLookup.Stats {
    static func with(requests: Int, retries: Int, throttled: Int = 0) -> Self {
        var stats = Self()
        stats.requests = requests
        stats.retries = retries
        stats.throttled = throttled
        return stats
    }
}
