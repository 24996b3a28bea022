import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
@testable import StatusPolling

/// Whole runs, the App Store's failures: sporadic 5xx are retried without slowing the run, a 429
/// halves its concurrency, and a row sleeping out its backoff holds no request slot.
extension PollRunTests {
    func valid(_ index: Int) -> ScriptedAppStore.Reply {
        .json(AppleJSON.valid(transactions: [T(originalTransactionID: "otid-\(index)")], renewals: []))
    }

    /// Four 503s among twelve rows are noise: retried, counted, and the concurrency stays at 4
    /// (the share of failures is judged over a window of 200 answers).
    @Test(arguments: StoreKind.available) func sporadicServerErrorsAreRetriedWithoutBackingOff(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for index in 0..<12 {
                    try await db.insert(userID: "u\(index)", receipt: "R\(index)")
                    await server.script("R\(index)", index % 3 == 0 ? [.http(503, body: "busy"), valid(index)] : [valid(index)])
                }
                let report = try await poll(db, production, sandbox, attempts: 2, concurrency: 4)
                #expect(report.verified == 12)
                #expect(report.retries == 4)
                #expect(report.throttled == 4)
                #expect(report.lowestConcurrency == 4)
                #expect(report.exitCode == .success)
                #expect(await server.maxInFlight <= 4)
            }
        }
    }

    /// A 429 is an explicit request to slow down: the first halves the concurrency (4 → 2); the
    /// other three of the same round were in flight at the cut and do not cut again. (The server
    /// answers none before all four arrived: on a loaded machine the fourth could otherwise start
    /// after the cut, behind answers of the others' retries, and be a new round.)
    @Test(arguments: StoreKind.available) func rateLimitsHalveTheConcurrencyOncePerRound(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for index in 0..<4 {
                    try await db.insert(userID: "u\(index)", receipt: "R\(index)")
                    await server.script("R\(index)", [.afterRequests(4, .http(429, body: "slow down")), valid(index)])
                }
                let report = try await poll(db, production, sandbox, attempts: 2, concurrency: 4)
                #expect(report.verified == 4)
                #expect(report.retries == 4)
                #expect(report.throttled == 4)
                #expect(report.lowestConcurrency == 2)
                #expect(report.exitCode == .success)
            }
        }
    }

    /// `--concurrency` bounds requests, not rows: at concurrency 1, while the first row sleeps out
    /// an hour-long backoff, the next two rows are verified. The run is then stopped, and the
    /// sleeping row is abandoned with its columns untouched. (Were the slot held through the
    /// backoff, the other rows would never be asked and the test would hit its time limit.) The
    /// limit only turns that hang into a failure: it is far below the hour of the backoff and far
    /// above the test's length on any machine (two minutes were not, beside two builds in CI).
    @Test(.timeLimit(.minutes(30)), arguments: StoreKind.available)
    func aRowBackingOffHoldsNoRequestSlot(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for index in 0..<3 {
                    try await db.insert(userID: "u\(index)", receipt: "R\(index)")
                    await server.script("R\(index)", index == 0 ? [.http(503, body: "busy"), valid(index)] : [valid(index)])
                }
                var configuration = VerifyReceiptTesting.configuration(production, sandbox, attempts: 2)
                configuration.retry = RetryPolicy(maxAttempts: 2, initialBackoff: .seconds(3600), maxBackoff: .seconds(3600))
                let stop = StopSignal()
                let report = try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http, jitter: { 1.0 }) { client in
                    let run = PollRun(
                        configuration: .init(bundleID: AppleJSON.bundleID, nowMs: now, concurrency: 1, batchSize: 1, stopGrace: .milliseconds(100)),
                        store: db.store, source: client, logger: Logger(label: "test"), stop: stop,
                        progress: { if $0.done == 2 { stop.request() } })
                    return await run.run()
                }
                #expect(await server.received.map(\.receipt) == ["R0", "R1", "R2"])
                #expect(await server.maxInFlight == 1)
                #expect(report.verified == 2)
                #expect(report.abandoned == 1)
                #expect(report.interrupted)
                let first = try #require(try await db.store.subscription(id: 1))
                #expect(first.state.originalTransactionID == nil)
            }
        }
    }
}
