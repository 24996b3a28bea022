import Foundation
import Logging
import PollingDemo
import PostgresStore
import SQLiteStore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The report over a demo whose changes came by notification as well as by polls (the Server API,
/// the receiver, a catch-up before each night), on each store: who brought each change and the
/// notification lag, against an independent computation over the store's own tables.
@Suite(.serialized) struct TrailReportNotifiedDemoTests {
    @Test(arguments: StoreKind.available) func changesBySourceAndTheLagAgreeWithTheTables(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let configuration = ReportDemo.configuration(subscribers: 300, nights: 14, seed: 5, backend: .serverAPI, notifications: true)
            let demo = try await ReportDemo.play(configuration, database: Self.demoDatabase(db))
            #expect(demo.passed)
            let store = try await db.database().open()
            defer { Task { try? await store.close() } }
            let toMs = ReportDemo.toMs
            let report = try await TrailReport.read(
                store, runs: try await store.runs(last: 1000), fromMs: nil, toMs: toMs, environment: "Production", generatedAtMs: toMs, pageSize: 101)

            // Independently: every Production change the writers made (refused answers changed nothing),
            // by source, and each notified change's lag from its stored notification.
            let environment = kind == .sqlite
                ? "coalesce(json_extract(e.new_values, '$.environment'), json_extract(e.old_values, '$.environment'))"
                : "coalesce(e.new_values::jsonb->>'environment', e.old_values::jsonb->>'environment')"
            let rows = try await db.rows("""
                SELECT coalesce(e.source, 'unknown') AS source, e.at, n.apple_state_at
                FROM subscription_events AS e LEFT JOIN app_store_notifications AS n ON n.notification_id = e.notification_id
                WHERE e.reason NOT IN ('stale', 'conflict') AND \(environment) = 'Production'
                """)
            let bySource = Dictionary(grouping: rows, by: { $0["source"]! }).mapValues(\.count)
            let reported = report.sources.reduce(into: [String: Int]()) { total, week in total.merge(week.counts.filter { $0.value > 0 }, uniquingKeysWith: +) }
            #expect(reported == bySource)
            #expect((bySource["notification"] ?? 0) > 20)
            #expect((bySource["poll"] ?? 0) > 20)
            let lags = rows.compactMap { row in row["apple_state_at"].map { max(0, Int64(row["at"]!)! - Int64($0)!) / 1000 } }.sorted()
            #expect(report.notificationLag.count == lags.count)
            #expect(report.notificationLag.p50Seconds == lags[(lags.count - 1) / 2])
            #expect(report.notificationLag.p95Seconds == lags[Int(Double(lags.count - 1) * 0.95)])
            #expect(report.notificationLag.maxSeconds == lags.last)
            #expect(report.episodes.total > 5)
            #expect(report.runs.count == demo.nights.count)
            // Each notified change keeps its notification's time on its audit row (the rows above
            // hold more than 20 of them), a poll's has none.
            #expect(try await db.rows("""
                SELECT count(*) AS n FROM subscription_events AS e LEFT JOIN app_store_notifications AS a ON a.notification_id = e.notification_id
                WHERE e.apple_state_at IS DISTINCT FROM a.apple_state_at
                """) == [["n": "0"]])
            // Each audit row's report columns (SQLite v22, PostgreSQL v20) are its JSON's values, whichever writer wrote it.
            let differing = kind == .sqlite
                ? """
                    environment IS NOT coalesce(json_extract(new_values, '$.environment'), json_extract(old_values, '$.environment'))
                    OR verified IS NOT (json_extract(new_values, '$.original_transaction_id') IS NOT NULL)
                    OR expires_at IS NOT json_extract(new_values, '$.expires_at')
                    OR grace_period_expires_at IS NOT json_extract(new_values, '$.grace_period_expires_at')
                    OR is_in_billing_retry IS NOT coalesce(json_extract(new_values, '$.is_in_billing_retry'), 0)
                    OR auto_renew_status IS NOT json_extract(new_values, '$.auto_renew_status')
                    OR expiration_intent IS NOT json_extract(new_values, '$.expiration_intent')
                    OR cancelled_at IS NOT json_extract(new_values, '$.cancelled_at')
                    """
                : """
                    environment IS DISTINCT FROM coalesce(new_values::jsonb->>'environment', old_values::jsonb->>'environment')
                    OR verified IS DISTINCT FROM (new_values::jsonb->>'original_transaction_id' IS NOT NULL)::int
                    OR expires_at IS DISTINCT FROM (new_values::jsonb->>'expires_at')::bigint
                    OR grace_period_expires_at IS DISTINCT FROM (new_values::jsonb->>'grace_period_expires_at')::bigint
                    OR is_in_billing_retry IS DISTINCT FROM coalesce((new_values::jsonb->>'is_in_billing_retry')::boolean, false)::int
                    OR auto_renew_status IS DISTINCT FROM (new_values::jsonb->>'auto_renew_status')::boolean::int
                    OR expiration_intent IS DISTINCT FROM (new_values::jsonb->>'expiration_intent')::int
                    OR cancelled_at IS DISTINCT FROM (new_values::jsonb->>'cancelled_at')::bigint
                    """
            #expect(try await db.rows("SELECT count(*) AS n FROM subscription_events WHERE \(differing)") == [["n": "0"]])
            #expect(try await db.rows("SELECT count(*) AS n FROM subscription_events WHERE verified IS NULL") == [["n": "0"]])
            // Rows written before either (no time and no report columns on the audit row) are read
            // out of their JSON and find the time through their notification: the same report.
            // Through the store the report reads: the demo replaced SQLite's file under the test's own writer.
            try await (store as! any SQLStore).execute("UPDATE subscription_events SET apple_state_at = NULL, verified = NULL")
            #expect(try await db.rows("SELECT count(*) AS n FROM subscription_events WHERE verified IS NOT NULL OR apple_state_at IS NOT NULL") == [["n": "0"]])
            let older = try await TrailReport.read(
                store, runs: try await store.runs(last: 1000), fromMs: nil, toMs: toMs, environment: "Production", generatedAtMs: toMs, pageSize: 101)
            #expect(older.notificationLag == report.notificationLag)
            #expect(try older.json() == report.json())
        }
    }

    /// The demo's database on the store under test, with that store's own demo hooks.
    static func demoDatabase(_ db: StoreUnderTest) -> DemoDatabase {
        let database = db.database()
        if let sqlite = database as? SQLiteDatabase {
            return DemoDatabase(sqlite, isReplaceable: { await sqlite.isReplaceableByDemo() }, recreate: { try await sqlite.recreateForDemo() })
        }
        let postgres = database as! PostgreSQLDatabase
        return DemoDatabase(postgres, isReplaceable: { await postgres.isReplaceableByDemo() }, recreate: { try await postgres.recreateForDemo() })
    }
}
