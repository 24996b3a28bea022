import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
@testable import StatusPolling

/// A store outage stops the run early instead of hammering Apple, and changes nothing; `--deadline`
/// bounds a run; both leave the next run to pick up as usual.
@Suite struct CircuitBreakerTests {
    typealias T = AppleJSON.Transaction
    let t0 = AppleJSON.t0
    let day = AppleJSON.day
    var now: Int64 { t0 + 29 * day }

    func transient(_ reason: VerificationFailure.Reason) -> VerificationFailure { VerificationFailure(reason, "x", isTransient: true) }

    @Test func tripsOnlyWhenTheWindowIsFullAndTheShareReached() {
        var record = CircuitBreaker.Record(CircuitBreaker(window: 4, threshold: 0.75))
        #expect(record.record(transient(.timeout)) == nil)
        #expect(record.record(transient(.timeout)) == nil)
        #expect(record.record(nil) == nil)
        // 3 of the last 4: trips.
        let tripped = record.record(transient(.notJSON))
        #expect(tripped?.hasPrefix("circuit breaker: 3 of the last 4 subscriptions failed in a way that may pass (timeout 2, not_json 1); ") == true)

        var sliding = CircuitBreaker.Record(CircuitBreaker(window: 4, threshold: 0.75))
        for failure in [transient(.transport), nil, nil, transient(.transport), transient(.transport)] {
            #expect(sliding.record(failure) == nil)
        }
        // The window slid past the two successes only now: nil, t, t, t.
        #expect(sliding.record(transient(.httpStatus))?.contains("(transport 2, http_status 1)") == true)
    }

    /// Counted per request, 3 % and 10 % of failures over 20,000 answers never come near 80 % of 50.
    @Test(arguments: [0.03, 0.10]) func sporadicFailuresNeverTripItPerRequest(rate: Double) {
        var record = CircuitBreaker.Record(CircuitBreaker(), counting: "requests")
        var trips = 0
        for signal in ConcurrencyLimitTests.noise(rate: rate, count: 20_000, seed: 7) {
            let reason: VerificationFailure.Reason? = if case .transient(let reason) = signal { reason } else { nil }
            if record.record(transient: reason) != nil { trips += 1 }
        }
        #expect(trips == 0)
    }

    @Test func failuresOfTheRowItselfNeverCount() {
        var record = CircuitBreaker.Record(CircuitBreaker(window: 3, threshold: 0.5))
        for reason in [VerificationFailure.Reason.bundleMismatch, .conflict, .appleStatus, .chainNotInReceipt, .bundleMismatch] {
            #expect(record.record(VerificationFailure(reason, "x", isTransient: false)) == nil)
        }
    }

    /// One run against the scripted store, with the breaker and deadline given. The grace after a
    /// halt is long unless a test needs requests abandoned: an answer held up on a busy machine
    /// must not be abandoned where a test counts every request as answered.
    func poll(
        _ db: StoreUnderTest, _ production: String, _ sandbox: String, breaker: CircuitBreaker?, deadline: Duration? = nil,
        stopGrace: Duration = .seconds(60), concurrency: Int = 4, attempts: Int = 1
    ) async throws -> RunReport {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = VerifyReceiptTesting.configuration(production, sandbox, attempts: attempts, timeout: .seconds(600))
        return try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http, jitter: { 0.5 }) { client in
            let run = PollRun(
                configuration: .init(
                    bundleID: AppleJSON.bundleID, nowMs: now, concurrency: concurrency, stopGrace: stopGrace,
                    circuitBreaker: breaker, deadline: deadline),
                store: db.store, source: client, logger: logger)
            return await run.run()
        }
    }

    func verified(_ otid: String) -> SubscriptionState {
        SubscriptionState(originalTransactionID: otid, productID: "premium.monthly", environment: "Production", expiresAt: t0 + 30 * day, autoRenewStatus: true)
    }

    func valid(_ otid: String) -> String {
        AppleJSON.valid(transactions: [T(originalTransactionID: otid, expiresMs: t0 + 60 * day)], renewals: [AppleJSON.Renewal(originalTransactionID: otid)])
    }

    @Test(arguments: StoreKind.available) func aSustainedOutageStopsTheRunAndTheNextRunPicksUp(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                var ids: [Int64] = []
                for i in 0..<200 {
                    ids.append(try await db.insert(userID: "u\(i)", receipt: "R\(i)", verified("o\(i)")))
                    // The 2020 outage: 5xx, then HTTP 200 outage pages.
                    await server.script("R\(i)", [i % 2 == 0 ? .http(503) : .html])
                }
                let before = try await ids.asyncMap { try await db.contractColumns($0) }
                let report = try await poll(db, production, sandbox, breaker: CircuitBreaker(window: 20, threshold: 0.8))
                #expect(report.exitCode == .aborted)
                let message = try #require(report.aborted)
                // One attempt a row: requests and rows reach the window together, and either count may name
                // it; the window's mix of the two failures (most first) depends on which answers came first.
                #expect(message.hasPrefix("circuit breaker: 20 of the last 20 requests failed in a way that may pass (")
                    || message.hasPrefix("circuit breaker: 20 of the last 20 subscriptions failed in a way that may pass ("), "\(message)")
                let mix = message.drop { $0 != "(" }.dropFirst().prefix { $0 != ")" }.split(separator: ", ").map { $0.split(separator: " ") }
                #expect(Set(mix.map { String($0[0]) }) == ["http_status", "not_json"], "\(message)")
                #expect(mix.map { Int($0[1]) ?? 0 }.reduce(0, +) == 20, "\(message)")
                #expect(message.contains("); the App Store looks unavailable, so no more were asked."))
                // Only the window and the requests already in flight were sent; each row asked once.
                #expect(report.selected >= 20 && report.selected <= 23)
                #expect(await server.received.count == report.selected)
                #expect(report.failed == report.selected)
                #expect(report.verified == 0)
                #expect(try await ids.asyncMap { try await db.contractColumns($0) } == before)

                for i in 0..<200 { await server.script("R\(i)", [.json(valid("o\(i)"))]) }
                let next = try await poll(db, production, sandbox, breaker: CircuitBreaker(window: 20, threshold: 0.8))
                #expect(next.exitCode == .success)
                #expect(next.verified == 200)
                #expect(next.updated == 200)
            }
        }
    }

    @Test(arguments: StoreKind.available) func offTriesEveryRow(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for i in 0..<60 {
                    _ = try await db.insert(userID: "u\(i)", receipt: "R\(i)", verified("o\(i)"))
                    await server.script("R\(i)", [.html])
                }
                let report = try await poll(db, production, sandbox, breaker: nil)
                #expect(report.aborted == nil)
                #expect(report.exitCode == .someFailed)
                #expect(report.selected == 60)
                #expect(report.failedByReason == [.notJSON: 60])
                #expect(await server.received.count == 60)
            }
        }
    }

    @Test(arguments: StoreKind.available) func answersThatBelongToTheRowsDoNotTripIt(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for i in 0..<60 {
                    _ = try await db.insert(userID: "u\(i)", receipt: "R\(i)", verified("o\(i)"))
                    await server.script("R\(i)", [.json(AppleJSON.status(21003))])
                }
                let report = try await poll(db, production, sandbox, breaker: CircuitBreaker(window: 20, threshold: 0.5))
                #expect(report.aborted == nil)
                #expect(report.selected == 60)
                #expect(report.failedByReason == [.appleStatus: 60])
            }
        }
    }

    @Test(arguments: StoreKind.available) func theDeadlineStopsStartingRowsAndAbandonsWhatNeverAnswers(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                var ids: [Int64] = []
                for i in 0..<10 {
                    ids.append(try await db.insert(userID: "u\(i)", receipt: "R\(i)", verified("o\(i)")))
                    // An answer that never comes within the test.
                    await server.script("R\(i)", [.never])
                }
                let before = try await ids.asyncMap { try await db.contractColumns($0) }
                // The deadline leaves time for the four rows to start on a busy machine; none answers.
                let report = try await poll(db, production, sandbox, breaker: CircuitBreaker(), deadline: .seconds(2), stopGrace: .milliseconds(200))
                #expect(report.exitCode == .interrupted)
                #expect(report.interrupted)
                #expect(report.deadlineReached)
                #expect(report.aborted == nil)
                #expect(report.abandoned == 4)
                #expect(report.selected == 0)
                #expect(await server.received.count <= 4)
                #expect(try await ids.asyncMap { try await db.contractColumns($0) } == before)
                #expect(report.text().contains("STOPPED    at the deadline after 0 rows, 4 in flight abandoned"))
            }
        }
    }
}
