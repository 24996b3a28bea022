import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Whole runs, the writer's side: results written in batches and each one counted, a batch that
/// cannot be written retried row by row, and a blocked writer holding new rows back.
extension PollRunTests {
    @Test(arguments: StoreKind.available) func resultsAreWrittenInBatchesAndEveryOneIsCounted(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for index in 0..<57 {
                    try await db.insert(userID: "u\(index)", receipt: "R\(index)")
                    await server.script("R\(index)", [.json(AppleJSON.valid(latestReceipt: "NEW-\(index)", transactions: [T(originalTransactionID: "otid-\(index)", expiresMs: t0 + 33 * day)], renewals: [R(originalTransactionID: "otid-\(index)")]))])
                }
                let report = try await poll(db, production, sandbox, concurrency: 6, pageSize: 10, batchSize: 8)
                #expect(report.selected == 57)
                #expect(report.verified == 57)
                #expect(report.updated == 57)
                #expect(report.transitions == [.firstVerified: 57])
                #expect(report.exitCode == .success)
                for index in 0..<57 {
                    let row = try #require(try await db.store.subscription(id: Int64(index + 1)))
                    #expect(row.state.originalTransactionID == "otid-\(index)")
                    #expect(row.latestReceipt == "NEW-\(index)")
                }
                let events = try await db.row("SELECT count(*) AS n FROM subscription_events WHERE reason = 'first_verified'")?["n"].flatMap { Int($0) }
                #expect(events == 57)
            }
        }
    }

    /// A writer that cannot keep up holds the run back: with four in flight and batches of four,
    /// no row starts once four answers wait behind the batch being written, so the App Store sees
    /// 4 (the batch) + 4 + 3 (in flight when the fourth came) = 11 requests until the database frees up.
    @Test(arguments: StoreKind.available) func aBlockedWriterStopsNewRowsOnceABatchOfAnswersWaits(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for index in 0..<40 {
                    try await db.insert(userID: "u\(index)", receipt: "R\(index)")
                    await server.script("R\(index)", [.json(AppleJSON.valid(transactions: [T(originalTransactionID: "otid-\(index)")], renewals: []))])
                }
                // Another connection holds the database's write lock; the run's store waits for it.
                // Released below; and whatever happens, before the test leaves.
                try await db.withWriteLockHeld { store, release in
                    // A timeout that never fires: a retry would be a twelfth request.
                    let configuration = VerifyReceiptTesting.configuration(production, sandbox, attempts: 3)
                    let report = Task {
                        try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http, jitter: { 0.5 }) { client in
                            let run = PollRun(
                                configuration: .init(bundleID: AppleJSON.bundleID, nowMs: now, concurrency: 4, pageSize: 500, batchSize: 4, flushInterval: .seconds(600)),
                                store: store, source: client, logger: Logger(label: "test"))
                            #expect(run.configuration.maxPending == 4)
                            return await run.run()
                        }
                    }
                    // The eleven come however slow the machine; the bound only ends a run that sends fewer.
                    _ = try await eventually { await server.received.count >= 11 }
                    // Room for a twelfth to show up, were the run to send one.
                    try await Task.sleep(for: .milliseconds(500))
                    #expect(await server.received.count == 11)
                    release()
                    let finished = try await report.value
                    #expect(finished.verified == 40)
                    #expect(finished.exitCode == .success)
                    #expect(await server.received.count == 40)
                    #expect(Set(await server.received.compactMap(\.receipt)).count == 40)
                }
            }
        }
    }

    @Test(arguments: StoreKind.available) func aBatchThatCannotBeWrittenIsRetriedRowByRow(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for index in 0..<6 {
                    try await db.insert(userID: index == 3 ? "poisoned" : "u\(index)", receipt: "R\(index)")
                    await server.script("R\(index)", [.json(AppleJSON.valid(transactions: [T(originalTransactionID: "otid-\(index)")], renewals: []))])
                }
                try await db.poisonUpdates(ofUser: "poisoned")
                let report = try await poll(db, production, sandbox, concurrency: 6, batchSize: 100)
                #expect(report.selected == 6)
                #expect(report.verified == 5)
                #expect(report.failedByReason == [.storeError: 1])
                #expect(report.exitCode == .someFailed)
                #expect(try await db.store.subscription(id: 4)?.state == .unverified)
                for id in [1, 2, 3, 5, 6] as [Int64] {
                    #expect(try await db.store.subscription(id: id)?.state.originalTransactionID == "otid-\(id - 1)")
                }
            }
        }
    }
}
