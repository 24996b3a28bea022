import AppStoreSimulator
import Foundation
import Logging
import PollingDemo
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The nights with App Store Server Notifications: the simulator posts every lifecycle event to
/// the receiver (with lost, duplicated and delayed tries), the receiver is down for a stretch of
/// days, and each run catches up from Apple's history first. After every night every row equals
/// the App Store now, and what polling would have found days later reached the rows at once.
@Suite(.serialized) struct NotifiedNightsTests {
    func configuration(_ backend: DemoBackend, receiverDown: ClosedRange<Int>? = nil) -> DemoConfiguration {
        var configuration = DemoConfiguration(
            subscribers: 400, nights: 12, seed: 3, faultRate: 0.03, latency: .none, concurrency: 16, requestTimeout: VerifyReceiptTesting.patientTimeout,
            retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20), maxRetryAfter: .milliseconds(20)),
            slowAnswers: false, finalNightMs: 1_790_000_000_000, backend: backend)
        configuration.notifications = true
        configuration.receiverDownNights = receiverDown
        return configuration
    }

    func quietLogger() -> Logger {
        var logger = Logger(label: "notified-nights")
        logger.logLevel = .critical
        return logger
    }

    @Test func aReceiverDownForDaysIsCaughtUpByTheNextRun() async throws {
        try await withTemporaryDatabase { db in
            let demo = try await Demo.play(
                configuration(.serverAPI, receiverDown: 4...6), database: .sqlite(path: db.path + ".notified"), logger: quietLogger())
            for night in demo.nights {
                #expect(night.check.disagreements.isEmpty, "night \(night.number): \(night.check.disagreements.prefix(5))")
                #expect(night.check.unwatched.isEmpty, "night \(night.number)")
            }
            // Down from the night before night 4 through night 6: every try then failed, and the
            // catch-ups of nights 4 to 6 read them from the history; afterwards the pushes arrive.
            for night in demo.nights where (4...6).contains(night.number) {
                #expect(night.notifications.posted == 0, "night \(night.number)")
                #expect(night.notifications.lost > 0, "night \(night.number)")
            }
            #expect(demo.nights[8].notifications.delivered > 0)
            #expect(demo.nights.allSatisfy { $0.catchUpRequests >= 2 })
            #expect(demo.passed)
            // Lost tries wait for Apple's retry or the next catch-up; refunds and recoveries outside
            // the down days reach their rows at once.
            #expect(demo.lag.all.count > 100)
            #expect(demo.lag.unreflected == 0)
            // The ledger against the App Store: every transaction priced (Apple's signed data
            // carries the price), in several currencies, with offers, and recoveries marked.
            #expect(demo.ledger.disagreements.isEmpty, "\(demo.ledger.disagreements.prefix(5))")
            #expect(demo.ledger.transactions > 400 && demo.ledger.priced == demo.ledger.transactions)
            #expect(demo.ledger.currencies == ["CAD", "EUR", "GBP", "JPY", "USD"])
            #expect(demo.ledger.offers[1, default: 0] > 0 && demo.ledger.offers[2, default: 0] > 0 && demo.ledger.offers[3, default: 0] > 0)
            #expect(demo.ledger.recoveries > 0)
        }
    }

    @Test func version1NotificationsWithVerifyReceiptAgreeWithTheAppStoreNow() async throws {
        try await withTemporaryDatabase { db in
            let demo = try await Demo.play(configuration(.verifyReceipt), database: .sqlite(path: db.path + ".v1"), logger: quietLogger())
            for night in demo.nights {
                #expect(night.check.disagreements.isEmpty, "night \(night.number): \(night.check.disagreements.prefix(5))")
                #expect(night.catchUpRequests == 0)
            }
            #expect(demo.passed)
            #expect(demo.nights.map(\.notifications.delivered).reduce(0, +) > 50)
            // verifyReceipt and V1 carry no price: the ledger agrees with the App Store and guesses none.
            #expect(demo.ledger.disagreements.isEmpty, "\(demo.ledger.disagreements.prefix(5))")
            #expect(demo.ledger.transactions > 400 && demo.ledger.priced == 0 && demo.ledger.currencies.isEmpty)
        }
    }
}
