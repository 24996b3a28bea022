import AppStoreSimulator
import Foundation
import GRDB
import Logging
import PollingDemo
import ReportPage
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
import Testing

@testable import StatusPolling

/// The report over a demo's trail: its numbers against plain SQL over `subscription_events`, and
/// its billing episodes against the simulator's own truth (it knows every failed renewal and its
/// recovery).
@Suite(.serialized) struct TrailReportDemoTests {
    @Test func theDemosReportAgreesWithTheTrailAndTheTruth() async throws {
        try await withTemporaryDatabase { db in
            let path = db.path + ".report"
            let configuration = ReportDemo.configuration(subscribers: 400, nights: 40, seed: 9)
            let demo = try await ReportDemo.play(configuration, database: .sqlite(path: path))
            #expect(demo.passed)
            let store = try SQLiteSubscriptionStore.open(path: path)
            defer { try? store.close() }
            let toMs = ReportDemo.toMs
            var episodes: [BillingEpisode] = []
            let report = try await TrailReport.read(
                store, runs: try await store.runs(last: 1000), fromMs: nil, toMs: toMs, environment: "Production", generatedAtMs: toMs, pageSize: 97,
                onEpisode: { episodes.append($0) })
            #expect(episodes.count == report.episodes.total)

            // What lets the report skip old_values: each audit row's old values are its row's new
            // values of the row before (refused answers aside, which changed nothing).
            let mismatched = try await store.pool.read { d in
                try Int.fetchOne(d, sql: """
                    SELECT count(*) FROM (
                        SELECT old_values, lag(new_values) OVER (PARTITION BY subscription_id ORDER BY id) AS previous
                        FROM subscription_events WHERE reason NOT IN ('stale', 'conflict'))
                    WHERE previous IS NOT NULL AND old_values <> previous
                    """)
            }
            #expect(mismatched == 0)

            // Plain SQL: the week's movement by reason, the refunds by day, the runs.
            let sql = try await store.pool.read { d in
                try Row.fetchAll(d, sql: """
                    SELECT reason, count(*) AS n FROM subscription_events
                    WHERE json_extract(new_values, '$.environment') = 'Production' OR (json_extract(new_values, '$.environment') IS NULL AND json_extract(old_values, '$.environment') = 'Production')
                    GROUP BY reason
                    """).reduce(into: [String: Int]()) { $0[$1["reason"]] = $1["n"] }
            }
            let movement = report.movement.reduce(into: [String: Int]()) { total, week in total.merge(week.counts, uniquingKeysWith: +) }
            #expect(movement["renewed"] == sql["renewed"])
            #expect(movement["recovered"] == sql["recovered"])
            #expect(movement["refunded"] == sql["refunded"])
            #expect(movement["new"] == (sql["first_verified"] ?? 0) + (sql["discovered"] ?? 0))
            #expect(report.runs.count == demo.nights.count)
            #expect(report.pollIntervalHours == 24)
            #expect(report.episodes.total == (try await Self.episodesByPlainSQL(store, toMs: toMs)))

            // The truth: every episode starts at a failed renewal's expiry (a billing retry of its
            // chain), and one closed as recovered is a retry the simulator recovered, seen within a night.
            let population = Population(try PopulationConfiguration(
                subscribers: configuration.subscribers, seed: configuration.seed, startMs: configuration.finalNightMs - Int64(configuration.nights) * 86_400_000,
                horizonMs: configuration.finalNightMs + 90 * 86_400_000, gracePeriodDays: configuration.gracePeriodDays
            ).applying(rates: configuration.rates))
            #expect(report.episodes.total > 20)
            var recovered = 0
            for episode in episodes {
                let row = try #require(try await store.subscription(id: episode.subscriptionID))
                let chain = try #require(population.subscriber(userID: row.userID)?.chains.first { $0.originalTransactionID == row.state.originalTransactionID })
                let retry = try #require(chain.billingRetries.first { $0.startMs == episode.startMs }, "episode of \(episode.subscriptionID) at \(episode.startMs)")
                if episode.outcome == .recovered {
                    recovered += 1
                    #expect(retry.recovered)
                    let seenAfter = try #require(episode.closedAtMs) - retry.endMs
                    #expect(seenAfter >= 0 && seenAfter <= 86_400_000, "recovery seen \(seenAfter) ms after it")
                }
                if episode.outcome == .lost { #expect(!retry.recovered) }
            }
            #expect(recovered > 5)

            // The page: every chart drawn, the JSON's numbers in it.
            let html = try ReportPage.html(report)
            #expect(html.components(separatedBy: "<svg").count - 1 == 7)
            #expect(!html.contains("Nothing in this period"))
            #expect(!html.contains("<script"))
            let json = try #require(try JSONSerialization.jsonObject(with: Data(try report.json().utf8)) as? [String: Any])
            #expect((json["episodes"] as? [String: Any])?["total"] as? Int == episodes.count)
        }
    }
}

extension TrailReportDemoTests {
    /// The billing episodes recounted as the report defines them, in plain SQL: each change of a
    /// Production row that puts it in billing retry or a grace period (unrefunded) from a state that
    /// was in neither — a first verification included, wherever its day 0 lies.
    static func episodesByPlainSQL(_ store: SQLiteSubscriptionStore, toMs: Int64) async throws -> Int {
        try await store.pool.read { d in
            try Int.fetchOne(d, sql: """
                SELECT count(*) FROM (
                    SELECT trouble, lag(trouble) OVER (PARTITION BY subscription_id ORDER BY id) AS before FROM (
                        SELECT id, subscription_id,
                            (json_extract(new_values, '$.is_in_billing_retry') = 1 OR json_extract(new_values, '$.grace_period_expires_at') IS NOT NULL)
                                AND json_extract(new_values, '$.cancelled_at') IS NULL AS trouble
                        FROM subscription_events
                        WHERE reason NOT IN ('stale', 'conflict') AND at < ? AND json_extract(new_values, '$.environment') = 'Production'))
                WHERE trouble AND (before IS NULL OR NOT before)
                """, arguments: [toMs])!
        }
    }

    /// Over 90 nights more rows are first verified in billing retry, long after their day 0.
    @Test func ninetyNightsEpisodesAgreeWithPlainSQL() async throws {
        try await withTemporaryDatabase { db in
            let path = db.path + ".report90"
            let configuration = ReportDemo.configuration(subscribers: 200, nights: 90, seed: 11)
            #expect(try await ReportDemo.play(configuration, database: .sqlite(path: path)).passed)
            let store = try SQLiteSubscriptionStore.open(path: path)
            defer { try? store.close() }
            let toMs = ReportDemo.toMs
            var firstSeenLate = 0
            let report = try await TrailReport.read(
                store, runs: try await store.runs(last: 1000), fromMs: nil, toMs: toMs, environment: "Production", generatedAtMs: toMs, pageSize: 97,
                onEpisode: { if $0.daysUntilSeen > 1 { firstSeenLate += 1 } })
            #expect(report.episodes.total == (try await Self.episodesByPlainSQL(store, toMs: toMs)))
            #expect(report.episodes.total > 20)
            #expect(firstSeenLate > 0)
        }
    }
}

/// `status-poller report` as a command: its files, its refusals.
@Suite struct ReportCommandTests {
    @Test func anEmptyTrailGivesAPageThatSaysSoAndBadFlagsExitTwo() async throws {
        try await withTemporaryDatabase { db in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-report-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let page = directory + "/page.html"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let html = try await StatusPollerProcess.launch(["report", "--database", db.path, "--output", page, "--from", "2026-11-01", "--to", "2026-11-07"]).outcome()
            #expect(html.status == 0, "\(html.stderr)")
            let text = try String(contentsOfFile: page, encoding: .utf8)
            #expect(text.components(separatedBy: "Nothing in this period").count - 1 == 7)
            #expect(text.contains("2026-11-01 – 2026-11-07"))
            let csv = try await StatusPollerProcess.launch(["report", "--database", db.path, "--format", "csv", "--output", directory + "/csv", "--from", "2026-11-01", "--to", "2026-11-07"]).outcome()
            #expect(csv.status == 0, "\(csv.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/csv").sorted() == [
                "churn.csv", "episodes.csv", "movement.csv", "mrr.csv", "mrr_movement.csv", "offers.csv", "price_unknown.csv", "recovery_curve.csv", "refund_rate.csv", "refund_requests.csv",
                "refunds.csv", "revenue_daily.csv", "revenue_monthly.csv", "runs.csv", "sources.csv", "state_mix.csv",
            ])
            #expect(try String(contentsOfFile: directory + "/csv/state_mix.csv", encoding: .utf8).split(separator: "\n").count == 8)  // a header, 7 days
            for (flags, message) in [
                (["--from", "2026-13-01"], "--from must be a date like 2026-11-01, got '2026-13-01'."),
                (["--from", "2026-11-08", "--to", "2026-11-01"], "--from (2026-11-08) is after --to (2026-11-01)."),
                (["--environment", "prod"], "--environment must be Production, Sandbox or all, got 'prod'."),
                (["--format", "csv", "--output", "-"], "--format csv writes a directory of files: give --output DIR, not -."),
            ] {
                let outcome = try await StatusPollerProcess.launch(["report", "--database", db.path] + flags).outcome()
                #expect(outcome.status == 2, "\(flags)")
                #expect(outcome.stderr.contains(message), "\(flags): \(outcome.stderr)")
            }
        }
    }
}
