import Foundation
import Logging
import PollingDemo
import SQLiteStore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The same App Store played twice — polling only, then with notifications bringing most changes —
/// gives the same churn by month and intent: churn is computed from what the trail records,
/// whoever brought it.
@Suite(.serialized) struct ChurnBySourceDemoTests {
    static func churn(notifications: Bool) async throws -> [String: [String: Int]] {
        try await withTemporaryDatabase { db in
            let path = db.path + (notifications ? ".notified" : ".polled")
            let configuration = ReportDemo.configuration(subscribers: 400, nights: 30, seed: 21, backend: .serverAPI, notifications: notifications)
            #expect(try await ReportDemo.play(configuration, database: .sqlite(path: path)).passed)
            let store = try SQLiteSubscriptionStore.open(path: path)
            defer { try? store.close() }
            let toMs = ReportDemo.toMs
            let report = try await TrailReport.read(
                store, runs: try await store.runs(last: 1000), fromMs: nil, toMs: toMs, environment: "Production", generatedAtMs: toMs, pageSize: 97)
            let sources = report.sources.reduce(into: [String: Int]()) { total, week in total.merge(week.counts, uniquingKeysWith: +) }
            #expect(notifications ? sources["notification"]! > sources["poll"]! : sources["notification"] == 0)
            return Dictionary(uniqueKeysWithValues: report.churn.filter { $0.kind == "month" }.map { ("\($0.startMs)", $0.byIntent) })
        }
    }

    /// Billing churn (intent 2) and every other intent but voluntary are equal month by month.
    /// Refunds are where the two setups see differently: a notification brings a refund at once,
    /// while polling sees it only when the row is next asked (near its expiry) — as the voluntary
    /// expiry that follows, or not yet. So voluntary + refunded may differ by at most the refunds
    /// only notifications saw. (Before churn was read from the trail whoever brought it, the
    /// notified demo's churn was nearly all "refunded".)
    @Test func notificationsAndPollsGiveTheSameChurn() async throws {
        let polled = try await Self.churn(notifications: false)
        let notified = try await Self.churn(notifications: true)
        #expect(Set(polled.keys) == Set(notified.keys))
        #expect(polled.values.map { $0.values.reduce(0, +) }.reduce(0, +) > 30)
        for (month, byIntent) in polled {
            let other = notified[month] ?? [:]
            let intents = Set(byIntent.keys).union(other.keys).subtracting(["1", "refunded"])
            for intent in intents { #expect(byIntent[intent] == other[intent], "\(month) intent \(intent)") }
            let seenOnlyByNotifications = (other["refunded"] ?? 0) - (byIntent["refunded"] ?? 0)
            #expect(seenOnlyByNotifications >= 0, "\(month)")
            let voluntaryOrRefunded = (byIntent["1"] ?? 0) + (byIntent["refunded"] ?? 0)
            let notifiedVoluntaryOrRefunded = (other["1"] ?? 0) + (other["refunded"] ?? 0)
            #expect(abs(voluntaryOrRefunded - notifiedVoluntaryOrRefunded) <= seenOnlyByNotifications, "\(month)")
            #expect((byIntent["unknown"] ?? 0) == 0 && (other["unknown"] ?? 0) == 0, "\(month)")
        }
    }
}
