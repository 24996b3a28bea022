import Foundation
import Logging
import PollingDemo
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// `demo --events` on a small population: every change the nights wrote arrives at the loopback
/// endpoint once by id and in order per user, through 5 % failures and a night the endpoint is down.
@Suite struct DemoEventsTests {
    @Test func everyChangeOfTheNightsArrivesInOrderPerUser() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-events-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DemoConfiguration(
            subscribers: 300, nights: 12, seed: 38, faultRate: 0.02, latency: .none, concurrency: 16, requestTimeout: VerifyReceiptTesting.patientTimeout,
            retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20), maxRetryAfter: .milliseconds(20)),
            slowAnswers: false, finalNightMs: 1_790_000_000_000)
        configuration.events = true
        configuration.eventsDownNight = 6
        var logger = Logger(label: "demo-events")
        logger.logLevel = .critical
        let outcome = try await Demo.play(configuration, database: .sqlite(path: directory.appendingPathComponent("demo.sqlite").path), logger: logger)
        let events = try #require(outcome.events)
        #expect(outcome.passed)
        #expect(events.written > 300, "at least each subscriber's first verification")
        #expect(events.arrived == events.written)
        #expect(events.lost == 0)
        #expect(events.outOfOrder == 0)
        #expect(events.badSignatures == 0)
        #expect(events.refused > 0, "the night down and the 5 % failures refused some")
        // The night down holds its events a day: the longest lag is at least that.
        #expect((events.lagsMs.last ?? 0) >= 86_400_000)
        #expect(outcome.summary.contains("Outbound events: \(events.written.formatted()) written by the trail's changes"))
    }
}
