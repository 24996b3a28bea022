import Foundation
import Logging
import Synchronization
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// A second backend needs nothing but ``SubscriptionStatusSource``: a scripted source, speaking
/// none of verifyReceipt's types, runs through the same pipeline, decision and store.
@Suite struct StatusSourceSeamTests {
    let t0 = AppleJSON.t0
    let day = AppleJSON.day
    var now: Int64 { t0 + 29 * day }
    static let backend = StatusBackend(rawValue: "scripted")

    /// Answers each row from a script keyed by its receipt, and counts the rows asked about.
    final class ScriptedSource: SubscriptionStatusSource {
        let script: [String: StatusLookup.Result]
        let asked = Mutex<[Int64]>([])

        init(_ script: [String: StatusLookup.Result]) { self.script = script }

        func status(of row: SubscriptionRow, logger: Logger) async throws -> StatusLookup {
            asked.withLock { $0.append(row.id) }
            var stats = StatusLookup.Stats()
            stats.requests = 1
            let result = script[row.latestReceipt] ?? .failed(VerificationFailure(.transport, "unscripted", isTransient: true))
            return StatusLookup(result: result, stats: stats)
        }
    }

    func answer(_ otid: String, expires: Int64, code: Int = 200, bundleID: String = AppleJSON.bundleID) -> StatusLookup.Result {
        .answered(StatusAnswer(
            upstreamStatus: UpstreamStatus(backend: Self.backend, code: code), bundleID: bundleID, environment: "Sandbox",
            transactions: [SubscriptionTransaction(productID: "premium.monthly", transactionID: "\(otid)-2", originalTransactionID: otid, purchaseDateMs: t0, expiresDateMs: expires)],
            renewals: [SubscriptionRenewalInfo(originalTransactionID: otid, autoRenewProductID: "premium.monthly", autoRenewStatus: false, expirationIntent: 1)]))
    }

    func run(_ db: StoreUnderTest, _ source: ScriptedSource) async -> RunReport {
        await PollRun(
            configuration: .init(bundleID: AppleJSON.bundleID, nowMs: now, concurrency: 1), store: db.store, source: source,
            logger: Logger(label: "test")
        ).run()
    }

    @Test(arguments: StoreKind.available) func aScriptedBackendDecidesThroughTheSameRulesIntoTheSameColumns(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let renewed = try await db.insert(userID: "renewed", receipt: "S-renewed")
            let refused = try await db.insert(userID: "refused", receipt: "S-refused")
            let otherApp = try await db.insert(userID: "other-app", receipt: "S-other")
            let source = ScriptedSource([
                "S-renewed": answer("otid-s1", expires: t0 + 60 * day),
                "S-refused": .failed(VerificationFailure(.appleStatus, "scripted status 4040010", upstreamStatus: UpstreamStatus(backend: Self.backend, code: 4_040_010))),
                "S-other": answer("otid-s3", expires: t0 + 60 * day, bundleID: "com.example.other"),
            ])
            let report = await run(db, source)

            #expect(report.selected == 3)
            #expect(report.verified == 1)
            #expect(report.transitions == [.firstVerified: 1])
            #expect(report.failedByReason == [.appleStatus: 1, .bundleMismatch: 1])
            #expect(report.failedByUpstreamStatus == [UpstreamStatus(backend: Self.backend, code: 4_040_010): 1])
            let json = try JSONSerialization.jsonObject(with: Data(try report.json().utf8)) as? [String: Any]
            #expect(json?["failed_by_upstream_status"] as? [String: Int] == ["scripted 4040010": 1])
            #expect(report.exitCode == .someFailed)

            let row = try #require(try await db.rawRow(renewed))
            #expect(row["original_transaction_id"] == "otid-s1")
            #expect(row["environment"] == "Sandbox")
            #expect(row["expires_at"] == "\(t0 + 60 * day)")
            #expect(row["auto_renew_status"] == "0")
            #expect(row["expiration_intent"] == "1")
            #expect(row["last_apple_status"] == "200")
            #expect(row["latest_receipt"] == "S-renewed")
            let failed = try #require(try await db.rawRow(refused))
            #expect(failed["original_transaction_id"] == nil)
            #expect(failed["last_apple_status"] == "4040010")
            #expect(failed["last_error_reason"] == "apple_status")
            #expect(try await db.rawRow(otherApp)?["last_error_reason"] == "bundle_mismatch")
        }
    }

    @Test(arguments: StoreKind.available) func rejectedCredentialsAbortTheRunWhateverTheBackend(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            for index in 0..<5 { try await db.insert(userID: "u\(index)", receipt: "S\(index)") }
            let abort = RunAbort.credentialsRejected(backend: Self.backend, detail: "scripted: the key was refused (401)")
            let source = ScriptedSource(Dictionary(uniqueKeysWithValues: (0..<5).map { ("S\($0)", StatusLookup.Result.credentialsRejected(abort)) }))
            let report = await run(db, source)

            #expect(report.exitCode == .aborted)
            #expect(report.aborted == "scripted: the key was refused (401)")
            #expect(source.asked.withLock { $0 } == [1])
            #expect(try await db.rawRow(1)?["consecutive_failures"] == "0")
            #expect(try await db.rawRow(1)?["last_attempt_at"] == nil)
        }
    }
}
