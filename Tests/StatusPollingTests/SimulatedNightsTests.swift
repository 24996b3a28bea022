import AppStoreSimulator
import Foundation
import Logging
import PollingDemo
import SQLiteStore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The poller against the simulator, night after night, checked against the simulator's truth:
/// after every night every row agrees, except rows whose verification failed that night, and those
/// keep exactly their previous columns.
@Suite(.serialized) struct SimulatedNightsTests {
    func configuration(subscribers: Int, nights: Int, faultRate: Double, outageNight: Int? = nil, seed: UInt64 = 7) -> DemoConfiguration {
        DemoConfiguration(
            subscribers: subscribers, nights: nights, seed: seed, faultRate: faultRate,
            // Timeouts far above any stall of a busy machine, and no slow answers: whether an
            // answer beats a timeout is a race, and these nights must replay exactly.
            latency: .none, concurrency: 32, requestTimeout: VerifyReceiptTesting.patientTimeout,
            retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20), maxRetryAfter: .milliseconds(20)), slowAnswers: false,
            outageNight: outageNight, finalNightMs: 1_790_000_000_000)
    }

    func quietLogger() -> Logger {
        var logger = Logger(label: "nights")
        logger.logLevel = .critical
        return logger
    }

    @Test func twoThousandSubscribersOverSixtyNightsWithTenPercentFaults() async throws {
        try await withTemporaryDatabase { db in
            let database = DemoDatabase.sqlite(path: db.path + ".nights")
            let demo = try await Demo.play(
                configuration(subscribers: 2000, nights: 60, faultRate: 0.10, outageNight: 30), database: database, logger: quietLogger())
            #expect(demo.nights.count == 61)
            // A subscriber with two subscriptions has one row enrolled; the run enrols the other
            // chain as a row of the same user (discovered), and checks it like any other.
            var rows = 2000
            for night in demo.nights {
                rows += night.report.discovered
                #expect(night.check.disagreements.isEmpty, "night \(night.number): \(night.check.disagreements.prefix(5))")
                #expect(night.check.rows == rows, "night \(night.number)")
                if night.number != 30 { #expect(night.report.aborted == nil, "night \(night.number)") }
                // Every failure the run reported is a row that kept its columns.
                #expect(night.check.failedTonight == night.report.failed, "night \(night.number)")
                #expect(night.check.verifiedTonight == night.report.verified - night.report.superseded + night.report.discovered)
            }
            #expect(rows > 2000)
            let faulty = demo.nights.filter { $0.faulty && $0.number != 30 }
            // The faults were real: retries happened and some rows still failed after them.
            #expect(faulty.map(\.report.retries).reduce(0, +) > 500)
            #expect(faulty.map(\.report.failed).reduce(0, +) > 0)
            #expect(demo.simulator.faults > 1000)
            // The outage night: the circuit breaker stopped the run after its window of failed
            // requests; every row asked failed, nothing changed, nobody lost access.
            let outage = demo.nights[29]
            #expect(outage.exitCode == .aborted)
            #expect(outage.report.aborted?.hasPrefix("circuit breaker: 50 of the last 50 requests failed") == true, "\(outage.report.aborted ?? "")")
            // Counted in requests: the window's answers and those in flight when it tripped, at most
            // the concurrency of 32; no retry after it, so the rows in progress keep their columns.
            #expect(outage.report.requests >= 50 && outage.report.requests <= 50 + 32, "\(outage.report.requests) requests")
            #expect(outage.report.failed == outage.report.selected)
            #expect(outage.report.updated == 0)
            #expect(outage.check.untouched + outage.check.failedTonight == outage.check.rows)
            // The lifecycle showed up: renewals, grace periods, recoveries, expiries, refunds, upgrades.
            let transitions = demo.nights.reduce(into: [SubscriptionTransition: Int]()) { sum, night in
                for (key, value) in night.report.transitions { sum[key, default: 0] += value }
            }
            for kind in [SubscriptionTransition.renewed, .enteredGrace, .recovered, .expired, .refunded, .upgraded, .firstVerified] {
                #expect(transitions[kind, default: 0] > 0, "no \(kind.rawValue) in 60 nights")
            }
            // The final, fault-free night leaves every row verified or current.
            let final = demo.final
            #expect(final.failedTonight == 0)
            #expect(final.disagreements.isEmpty)
            #expect(final.unwatched.isEmpty, "\(final.unwatched.prefix(5))")
            #expect(demo.states[.unverified, default: 0] == 0)
            #expect(demo.states.values.reduce(0, +) == rows)
            // The nights ran as cron runs them: each one is in the run history, with its exit code.
            let store = try await database.database.open()
            let runs = try await store.runs(last: 100)
            try await store.close()
            #expect(runs.count == 61)
            #expect(runs.allSatisfy { $0.mode == .nightly })
            #expect(runs.reversed().map(\.status) == demo.nights.map { $0.number == 30 ? .aborted : .finished })
            #expect(runs.reversed().map(\.exitCode) == demo.nights.map { Int($0.exitCode.rawValue) })
            #expect(runs.reversed().map(\.selected) == demo.nights.map(\.report.selected))
            try? FileManager.default.removeItem(atPath: db.path + ".nights")
        }
    }

    /// The final check catches a poller that stops watching rows: with the selection that let a row
    /// in billing retry go 60 days past expiry (the night before Apple's retries end), 90 nights leave
    /// rows that still say billing retry while the App Store says expired, and no later night would
    /// ask; with today's windows, none.
    @Test func theFinalCheckCountsRowsNoLaterNightWillAsk() async throws {
        try await withTemporaryDatabase { db in
            var stopsTooEarly = configuration(subscribers: 300, nights: 90, faultRate: 0)
            stopsTooEarly.windows = SelectionWindows(billingRetryPastExpiry: SelectionWindows.appleBillingRetryPeriod)
            let before = try await Demo.play(stopsTooEarly, database: .sqlite(path: db.path + ".before"), logger: quietLogger())
            #expect(before.disagreements.isEmpty)
            #expect(!before.final.unwatched.isEmpty)
            #expect(before.final.unwatched.allSatisfy { $0.what.contains("is_in_billing_retry: row true, truth false") }, "\(before.final.unwatched.prefix(3))")
            #expect(before.passed == false)
            let now = try await Demo.play(configuration(subscribers: 300, nights: 90, faultRate: 0), database: .sqlite(path: db.path + ".now"), logger: quietLogger())
            #expect(now.final.unwatched.isEmpty, "\(now.final.unwatched.prefix(3))")
            #expect(now.passed == true)
            try? FileManager.default.removeItem(atPath: db.path + ".before")
            try? FileManager.default.removeItem(atPath: db.path + ".now")
        }
    }

    @Test func theSameSeedReplaysTheSameNights() async throws {
        try await withTemporaryDatabase { db in
            let first = try await Demo.play(
                configuration(subscribers: 150, nights: 8, faultRate: 0.10, seed: 99), database: .sqlite(path: db.path + ".a"), logger: quietLogger())
            let second = try await Demo.play(
                configuration(subscribers: 150, nights: 8, faultRate: 0.10, seed: 99), database: .sqlite(path: db.path + ".b"), logger: quietLogger())
            #expect(first.nights.map(\.report.transitions) == second.nights.map(\.report.transitions))
            #expect(first.nights.map(\.report.selected) == second.nights.map(\.report.selected))
            #expect(first.states == second.states)
            #expect(first.simulator.outcomes.filter { $0.key.hasPrefix("fault_") }.count > 3)
            #expect(first.simulator.outcomes["fault_slow_answer", default: 0] == 0)
        }
    }
}
