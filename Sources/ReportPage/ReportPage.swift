import Foundation
import Mustache
import StatusPolling

/// `status-poller report --format html`: one self-contained page — inline SVG charts, no script,
/// no network — laid out by a Mustache template, each chart with its definition and its numbers.
public enum ReportPage {
    /// Apple's published 2019 figures (WWDC19 session 302; `shared/reference/insights.md`), drawn as
    /// labelled reference marks on the recovery curve, never as targets.
    static let appleReferences = [
        StackedChart.Reference(x: 16, y: 0.62, label: "Apple 2019: ≈62 % by day 16"),
        StackedChart.Reference(x: 60, y: 0.77, label: "Apple 2019: >77 % by day 60"),
    ]

    public static func html(_ report: TrailReport) throws -> String {
        let template = try MustacheTemplate(string: ReportTemplate.page)
        return template.render(context(report))
    }

    static func context(_ report: TrailReport) -> [String: Any] {
        let counts = report.episodeCounts
        let headline: [[String: Any]] = [
            ["value": String(report.episodes.total), "label": "billing-issue episodes"],
            ["value": wholePercent(report.curve.recovered(by: 7)), "label": "recovered by day 7"],
            ["value": wholePercent(report.curve.recovered(by: 16)), "label": "recovered by day 16"],
            ["value": wholePercent(report.curve.recovered(by: 60)), "label": "recovered by day 60"],
            ["value": report.medianDaysToRecover.map { "\($0) d" } ?? "–", "label": "median time to recover"],
            ["value": String(report.episodes.recoveredInGrace), "label": "recovered within grace"],
            ["value": String(counts["lost"] ?? 0), "label": "lost to billing"],
        ] + notificationHeadline(report)
        return [
            "environment": report.environment ?? "All", "from": TrailReport.date(report.fromMs), "to": TrailReport.date(report.toMs - 1),
            "generated": TrailReport.instant(report.generatedAtMs),
            "trailStarts": report.trailStartsAtMs.map { TrailReport.instant($0) } ?? "(empty)",
            "trailStartsLate": report.trailStartsAtMs.map { $0 >= report.fromMs + 86_400_000 } ?? false,
            "pollInterval": report.pollIntervalHours.map { String(format: "%.0f hours", $0) } ?? "(fewer than two nightly runs)",
            "headline": headline,
            "charts": ([recovery(report), stateMix(report), movement(report), churn(report), refunds(report)] + revenue(report) + [sources(report), runs(report)]).map(\.context),
        ]
    }

    /// One section: its chart, legend, definition and table.
    struct Section {
        var id: String
        var title: String
        var chart: StackedChart
        var definition: String
        var columns: [String]
        var rows: [[String]]

        var context: [String: Any] {
            [
                "id": id, "title": title, "svg": chart.svg(title: title), "hasData": chart.hasData, "definition": definition,
                "legend": chart.series.map { ["name": $0.name, "color": $0.color] }, "columns": columns, "rows": rows.map { ["cells": $0] },
            ]
        }
    }

    static func recovery(_ report: TrailReport) -> Section {
        let points = report.curve.points
        var chart = StackedChart(
            style: .area,
            series: [
                ChartSeries(name: "recovered", color: ChartPalette.green, values: points.map(\.recovered)),
                ChartSeries(name: "lost", color: ChartPalette.vermillion, values: points.map(\.lost)),
                ChartSeries(name: "cancelled", color: ChartPalette.orange, values: points.map(\.cancelled)),
                ChartSeries(name: "refunded", color: ChartPalette.purple, values: points.map(\.refunded)),
            ],
            xLabels: points.map { String($0.day) }, xTitle: "days since the failed renewal (day 0: its expiry)", yTitle: "share of episodes", shares: true)
        if let grace = report.episodes.medianGraceDays { chart.markers = [.init(x: grace, label: "grace period ends")] }
        chart.references = appleReferences
        return Section(
            id: "recovery", title: "Recovery from billing issues", chart: chart,
            definition: """
                An episode opens when a subscription enters billing retry or a grace period; day 0 is the failed renewal's expiry (Apple's clock), \
                and it closes as recovered (a later expiry), lost (the retry ended without a renewal), cancelled (auto-renew off while open) or \
                refunded. Cumulative shares by day, episodes still open counted until the report's end and no further (Aalen–Johansen); \
                an episode counts if it was first seen inside the report, wherever its day 0 lies, and joins the curve on the day it was \
                first seen (delayed entry: a row first verified in billing retry counts from that day on). \
                Rings: Apple's 2019 platform figures, for reference only.
                """,
            columns: ["day", "at risk", "recovered", "lost", "cancelled", "refunded"],
            rows: points.map { [String($0.day), String($0.atRisk), share($0.recovered), share($0.lost), share($0.cancelled), share($0.refunded)] })
    }

    static let stateColors: [(String, String, String)] = [
        ("active_renewing", "active, set to renew", ChartPalette.blue), ("active_cancelling", "active, set to cancel", ChartPalette.sky),
        ("grace_period", "grace period", ChartPalette.yellow), ("billing_retry", "billing retry", ChartPalette.orange),
        ("expired", "expired", ChartPalette.grey), ("refunded", "refunded", ChartPalette.purple),
    ]

    static func stateMix(_ report: TrailReport) -> Section {
        let days = report.stateMix
        return Section(
            id: "state-mix", title: "Subscriptions by state, end of each day",
            chart: StackedChart(
                style: .area, series: stateColors.map { key, name, color in ChartSeries(name: name, color: color, values: days.map { Double($0.counts[key] ?? 0) }) },
                xLabels: days.map { TrailReport.date($0.dateMs) }, xTitle: "day (UTC)", yTitle: "subscriptions"),
            definition: "Each subscription's state at the end of the day, as the entitlements view would have said then from the columns the trail recorded; a row counts from its first verification (or its discovery in a receipt).",
            columns: ["day"] + stateColors.map(\.1),
            rows: days.map { day in [TrailReport.date(day.dateMs)] + stateColors.map { String(day.counts[$0.0] ?? 0) } })
    }

    static let movementColors = [ChartPalette.blue, ChartPalette.sky, ChartPalette.green, ChartPalette.purple, ChartPalette.orange, ChartPalette.grey, ChartPalette.vermillion]

    static func movement(_ report: TrailReport) -> Section {
        let weeks = report.movement
        let names = TrailReport.movementNames
        return Section(
            id: "movement", title: "Movement per week",
            chart: StackedChart(
                style: .bars,
                series: zip(names, movementColors).map { name, color in
                    ChartSeries(name: name.replacingOccurrences(of: "_", with: " "), color: color, values: weeks.map { Double($0.counts[name] ?? 0) })
                },
                xLabels: weeks.map { TrailReport.date($0.startMs) }, xTitle: "week starting (Monday, UTC)", yTitle: "changes"),
            definition: "What the trail recorded each week: new (first verified), renewed, recovered, upgraded, entered billing trouble (an episode opened), expired, refunded.",
            columns: ["week"] + names, rows: weeks.map { week in [TrailReport.date(week.startMs)] + names.map { String(week.counts[$0] ?? 0) } })
    }

    static let intents: [(String, String, String)] = [
        ("1", "cancelled by the customer", ChartPalette.blue), ("2", "billing error", ChartPalette.orange),
        ("3", "price increase", ChartPalette.yellow), ("4", "product unavailable", ChartPalette.sky), ("5", "other", ChartPalette.green),
        ("refunded", "refunded", ChartPalette.purple), ("unknown", "unknown", ChartPalette.grey),
    ]

    static func churn(_ report: TrailReport) -> Section {
        let weeks = report.churn.filter { $0.kind == "week" }
        let months = report.churn.filter { $0.kind == "month" }
        return Section(
            id: "churn", title: "Churn by expiration intent, per week",
            chart: StackedChart(
                style: .bars, series: intents.map { key, name, color in ChartSeries(name: name, color: color, values: weeks.map { Double($0.byIntent[key] ?? 0) }) },
                xLabels: weeks.map { TrailReport.date($0.startMs) }, xTitle: "week starting (Monday, UTC)", yTitle: "share of the week's churn", normalized: true),
            definition: "Churn = subscriptions whose access ended in the period ÷ subscriptions with access at its start. A cancellation is not churn until its expiry; a grace period extends it; access regained in the same period (a recovery after expiry, a resubscription) nets out. Bars: the mix of expiration_intent.",
            columns: ["period", "start", "active at start", "churned", "rate"] + intents.map(\.1),
            rows: (weeks + months).map { period in
                [period.kind, TrailReport.date(period.startMs), String(period.activeAtStart), String(period.churned), period.rate.map(share) ?? "–"]
                    + intents.map { String(period.byIntent[$0.0] ?? 0) }
            })
    }

    static func refunds(_ report: TrailReport) -> Section {
        let days = report.refunds
        return Section(
            id: "refunds", title: "Refunds and renewals per day",
            chart: StackedChart(
                style: .bars,
                series: [
                    ChartSeries(name: "refunds (by refund date)", color: ChartPalette.vermillion, values: days.map { Double($0.refunds) }),
                    ChartSeries(name: "renewals and new", color: ChartPalette.blue, values: days.map { Double($0.renewals) }),
                ],
                xLabels: days.map { TrailReport.date($0.dateMs) }, xTitle: "day (UTC)", yTitle: "subscriptions", scalesPastFirstPoint: true),
            definition: "Refunds by the date Apple refunded (cancellation_date); renewals and new subscriptions by the day the trail saw them. The refund rate (refunds ÷ renewals and new, per week) revises past weeks as late refunds arrive. The axis is scaled to the days after the first; a taller first day (every row verified at once) is cut at the top with its figure written on it.",
            columns: ["week", "refunds", "renewals and new", "refund rate"],
            rows: report.refundRates.map { [TrailReport.date($0.startMs), String($0.refunds), String($0.paid), $0.rate.map(share) ?? "–"] })
    }

    /// The notification lag and share in the headline, once notifications brought any change.
    static func notificationHeadline(_ report: TrailReport) -> [[String: Any]] {
        let lag = report.notificationLag
        let total = report.sources.map { $0.counts.values.reduce(0, +) }.reduce(0, +)
        guard lag.count > 0, total > 0, let p95 = lag.p95Seconds else { return [] }
        let notified = report.sources.map { $0.counts["notification"] ?? 0 }.reduce(0, +)
        return [
            ["value": wholePercent(Double(notified) / Double(total)), "label": "of changes by notification"],
            ["value": duration(p95), "label": "notification lag, p95"],
        ]
    }

    static let sourceColors: [(String, String, String)] = [
        ("poll", "nightly poll", ChartPalette.blue), ("notification", "notification", ChartPalette.green),
        ("backfill", "backfill", ChartPalette.purple), ("extended", "renewal date extended", ChartPalette.orange),
        ("unknown", "not recorded", ChartPalette.grey),
    ]

    static func sources(_ report: TrailReport) -> Section {
        let weeks = report.sources
        func seconds(_ value: Int64?) -> String { value.map(duration) ?? "–" }
        return Section(
            id: "sources", title: "Who brought each change, per week",
            chart: StackedChart(
                style: .bars, series: sourceColors.map { key, name, color in ChartSeries(name: name, color: color, values: weeks.map { Double($0.counts[key] ?? 0) }) },
                xLabels: weeks.map { TrailReport.date($0.startMs) }, xTitle: "week starting (Monday, UTC)", yTitle: "share of the week's changes", normalized: true),
            definition: """
                Every change the trail recorded, by what brought it: a nightly poll, an App Store Server Notification (pushed, or read \
                from Apple's history by a catch-up), or a backfill; "not recorded" for rows written before the trail kept it. The \
                notification lag is from when Apple's data in the notification was true (its signedDate) to when the row held it — \
                a poll learns of the same change only at its next night.
                """,
            columns: ["week"] + sourceColors.map(\.1) + ["notification lag p50", "p95", "max"],
            rows: weeks.map { week in
                [TrailReport.date(week.startMs)] + sourceColors.map { String(week.counts[$0.0] ?? 0) }
                    + [seconds(week.notificationLag.p50Seconds), seconds(week.notificationLag.p95Seconds), seconds(week.notificationLag.maxSeconds)]
            })
    }

    /// Seconds as the page shows them: 0 s, 42 s, 7 min, 3.5 h, 2.1 d.
    static func duration(_ seconds: Int64) -> String {
        switch seconds {
        case ..<60: return "\(seconds) s"
        case ..<3_600: return "\(seconds / 60) min"
        case ..<86_400: return String(format: "%.1f h", Double(seconds) / 3_600)
        default: return String(format: "%.1f d", Double(seconds) / 86_400)
        }
    }

    /// A share as the headline shows it: 62 %.
    static func wholePercent(_ share: Double) -> String { String(format: "%.0f %%", share * 100) }

    static func runs(_ report: TrailReport) -> Section {
        let runs = report.runs
        return Section(
            id: "runs", title: "Runs",
            chart: StackedChart(
                style: .bars,
                series: [
                    ChartSeries(name: "verified", color: ChartPalette.green, values: runs.map { Double($0.verified ?? 0) }),
                    ChartSeries(name: "failed (access unchanged)", color: ChartPalette.vermillion, values: runs.map { Double($0.failed ?? 0) }),
                ],
                xLabels: runs.map { TrailReport.date($0.nowMs) }, xTitle: "run (by its clock)", yTitle: "subscriptions", scalesPastFirstPoint: true),
            definition: "The operator's view: each run's verified and failed rows (a failure never changes an entitlement column). The axis is scaled to the runs after the first; a taller first run (every row verified for the first time) is cut at the top with its figure written on it.",
            columns: ["run", "mode", "clock", "selected", "verified", "failed", "retries", "seconds"],
            rows: runs.map { run in
                [String(run.id), run.mode.rawValue, TrailReport.instant(run.nowMs), String(run.selected ?? 0), String(run.verified ?? 0), String(run.failed ?? 0),
                 String(run.retries ?? 0), run.finishedAtMs.map { String(format: "%.1f", Double($0 - run.startedAtMs) / 1000) } ?? "–"]
            })
    }

    static func share(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }
}
