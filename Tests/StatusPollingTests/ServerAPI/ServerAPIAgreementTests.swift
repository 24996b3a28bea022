import AppStoreSimulator
import Foundation
import GRDB
import Logging
import PollingDemo
import SQLiteStore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Both backends give the same row for the same subscription: the simulator's population is played
/// night after night through verifyReceipt, through the App Store Server API and through `auto`,
/// and every column of every row is compared (the receipt aside: the Server API returns none).
@Suite(.serialized) struct ServerAPIAgreementTests {
    static let compared = [
        "user_id", "original_transaction_id", "product_id", "environment", "expires_at", "grace_period_expires_at",
        "is_in_billing_retry", "auto_renew_status", "auto_renew_product_id", "expiration_intent", "cancelled_at",
        "last_verified_at", "last_attempt_at", "consecutive_failures", "last_error_reason",
    ]

    func configuration(_ backend: DemoBackend, faultRate: Double = 0) -> DemoConfiguration {
        DemoConfiguration(
            subscribers: 300, nights: 20, seed: 11, faultRate: faultRate, latency: .none, concurrency: 16, requestTimeout: VerifyReceiptTesting.patientTimeout,
            retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20), maxRetryAfter: .milliseconds(20)),
            slowAnswers: false, finalNightMs: 1_790_000_000_000, backend: backend)
    }

    /// Plays the demo and returns every row keyed by user and chain, with the demo's outcome.
    func play(_ backend: DemoBackend, in directory: URL, faultRate: Double = 0) async throws -> ([String: [String: DatabaseValue]], Demo.Outcome) {
        let (rows, outcome, _) = try await playRecordingBackends(backend, in: directory, faultRate: faultRate)
        return (rows, outcome)
    }

    /// Also returns the backends the rows and the audit trail name.
    func playRecordingBackends(_ backend: DemoBackend, in directory: URL, faultRate: Double = 0) async throws -> ([String: [String: DatabaseValue]], Demo.Outcome, Set<String>) {
        var logger = Logger(label: "agreement")
        logger.logLevel = .critical
        let path = directory.appendingPathComponent("\(backend.rawValue).sqlite").path
        let outcome = try await Demo.play(configuration(backend, faultRate: faultRate), database: .sqlite(path: path), logger: logger)
        let pool = try DatabasePool(path: path)
        defer { try? pool.close() }
        let rows = try pool.read { db in try Row.fetchAll(db, sql: "SELECT * FROM subscriptions") }
        let backends = try await pool.read { db in
            try Set(String?.fetchAll(db, sql: "SELECT last_status_backend FROM subscriptions UNION SELECT status_backend FROM subscription_events").map { $0 ?? "NULL" })
        }
        var byKey: [String: [String: DatabaseValue]] = [:]
        for row in rows {
            let key = "\(row["user_id"] as String)|\((row["original_transaction_id"] as String?) ?? "-")"
            byKey[key] = Dictionary(uniqueKeysWithValues: Self.compared.map { ($0, row[$0] as DatabaseValue) })
        }
        return (byKey, outcome, backends)
    }

    @Test func everyColumnOfEveryRowIsTheSameThroughEitherBackend() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("agreement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (receipts, byReceipt, receiptBackends) = try await playRecordingBackends(.verifyReceipt, in: directory)
        let (server, byServer, serverBackends) = try await playRecordingBackends(.serverAPI, in: directory)
        // The row and its audit trail say which backend answered.
        #expect(receiptBackends == ["verifyReceipt"])
        #expect(serverBackends == ["serverAPI"])
        let (auto, byAuto) = try await play(.auto, in: directory)
        #expect(receipts.count > 300)  // the discovered second subscriptions are rows too
        #expect(server.count == receipts.count)
        #expect(auto.count == receipts.count)
        for (key, row) in receipts {
            #expect(server[key] == row, "\(key): verifyReceipt \(row) ≠ Server API \(server[key] ?? [:])")
            #expect(auto[key] == row, "\(key): verifyReceipt \(row) ≠ auto \(auto[key] ?? [:])")
        }
        // The nights covered the lifecycle, and every row agreed with the truth after each.
        let states = Set(receipts.values.compactMap { $0["expiration_intent"].flatMap { Int.fromDatabaseValue($0) } })
        #expect(states.isSuperset(of: [1, 2]))
        #expect(receipts.values.contains { !$0["cancelled_at"]!.isNull })
        #expect(receipts.values.contains { !$0["grace_period_expires_at"]!.isNull })
        for outcome in [byReceipt, byServer, byAuto] { #expect(outcome.disagreements.isEmpty, "\(outcome.disagreements.prefix(3))") }
        // Each backend asked only its own endpoints.
        #expect(byReceipt.simulator.serverAPIRequests.isEmpty)
        #expect(byServer.simulator.requests == 0)
        #expect(byServer.simulator.serverAPIRequests["inApps/v1/subscriptions", default: 0] > 300)
        #expect(byAuto.simulator.requests == 0)
    }

    /// With the Server API's own faults (error codes, 429s with Retry-After, dropped connections,
    /// tampered signatures) every row still agrees with the truth after every night, and a failed
    /// row keeps its columns.
    @Test func theServerAPIAgreesWithTheTruthThroughFaults() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("agreement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, outcome) = try await play(.serverAPI, in: directory, faultRate: 0.10)
        for night in outcome.nights {
            #expect(night.check.disagreements.isEmpty, "night \(night.number): \(night.check.disagreements.prefix(5))")
            #expect(night.check.failedTonight == night.report.failed, "night \(night.number)")
        }
        #expect(outcome.simulator.serverAPIFaults > 50)
        #expect(outcome.simulator.outcomes["server_api_fault_tampered_signature", default: 0] > 0)
        #expect(outcome.nights.map(\.report.retries).reduce(0, +) > 50)
        #expect(outcome.nights.flatMap { $0.report.failedByReason.keys }.contains(.untrustedSignature))
    }
}
