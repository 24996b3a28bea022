extension TrailReport {
    /// The report's series as CSV files, by file name: the same numbers as the JSON, one table each.
    /// The episodes themselves (`episodes.csv`) are written as they close, by ``EpisodeCSV``.
    public func csv() -> [String: String] {
        func file(_ header: [String], _ rows: [[String]]) -> String {
            ([header] + rows).map { $0.map(Self.field).joined(separator: ",") }.joined(separator: "\n") + "\n"
        }
        func number(_ value: Double?) -> String { value.map { String($0) } ?? "" }
        let states = StateMix.State.allCases.map(\.rawValue)
        let intents = ["1", "2", "3", "4", "5", "refunded", "unknown"]
        return [
            "recovery_curve.csv": file(
                ["day", "at_risk", "recovered", "lost", "cancelled", "refunded"],
                curve.points.map { [String($0.day), String($0.atRisk), String($0.recovered), String($0.lost), String($0.cancelled), String($0.refunded)] }),
            "state_mix.csv": file(["date"] + states, stateMix.map { day in [Self.date(day.dateMs)] + states.map { String(day.counts[$0] ?? 0) } }),
            "refund_requests.csv": file(
                ["week", "requests", "answered", "no_consent", "expired", "refunded", "declined"],
                refundRequests.weeks.map { [Self.date($0.startMs), String($0.requests), String($0.answered), String($0.noConsent), String($0.expired), String($0.refunded), String($0.declined)] }),
            "revenue_daily.csv": file(Self.revenueHeader("date"), revenue.days.map(Self.revenueLine)),
            "revenue_monthly.csv": file(Self.revenueHeader("month"), revenue.months.map(Self.revenueLine)),
            "price_unknown.csv": file(
                ["date", "sales", "refunds", "recoveries"],
                revenue.priceUnknown.map { [Self.date($0.dateMs), String($0.sales), String($0.refunds), String($0.recoveries)] }),
            "offers.csv": file(
                ["month", "offer_type", "discount_type", "starts", "converted", "conversion"],
                revenue.offers.map { [Self.date($0.monthMs), String($0.offerType), $0.discountType, String($0.starts), String($0.converted), number($0.conversion)] }),
            "mrr.csv": file(
                ["at", "currency", "subscriptions", "mrr_milliunits"],
                revenue.monthlyRecurringRevenue.map { [Self.instant($0.atMs), $0.currency, String($0.subscriptions), String($0.milliunits)] }),
            "mrr_movement.csv": file(
                ["month", "currency"] + RevenueReport.MRRMovement.changeNames.flatMap { ["\($0)_subscriptions", "\($0)_milliunits"] } + ["net_milliunits"],
                revenue.mrrMovement.map { m in
                    [Self.date(m.monthMs), m.currency] + m.changes.flatMap { [String($0.1.subscriptions), String($0.1.milliunits)] } + [String(m.netMilliunits)]
                }),
            "churn.csv": file(
                ["period", "start", "active_at_start", "churned", "rate"] + intents.map { "intent_\($0)" },
                churn.map { p in [p.kind, Self.date(p.startMs), String(p.activeAtStart), String(p.churned), number(p.rate)] + intents.map { String(p.byIntent[$0] ?? 0) } }),
            "movement.csv": file(["week"] + Self.movementNames, movement.map { w in [Self.date(w.startMs)] + Self.movementNames.map { String(w.counts[$0] ?? 0) } }),
            "refunds.csv": file(["date", "refunds", "renewals_and_new"], refunds.map { [Self.date($0.dateMs), String($0.refunds), String($0.renewals)] }),
            "refund_rate.csv": file(["week", "refunds", "renewals_and_new", "rate"], refundRates.map { [Self.date($0.startMs), String($0.refunds), String($0.paid), number($0.rate)] }),
            "sources.csv": file(
                ["week"] + Self.sourceNames + ["notification_lag_p50_seconds", "notification_lag_p95_seconds"],
                sources.map { w in
                    [Self.date(w.startMs)] + Self.sourceNames.map { String(w.counts[$0] ?? 0) }
                        + [w.notificationLag.p50Seconds.map { String($0) } ?? "", w.notificationLag.p95Seconds.map { String($0) } ?? ""]
                }),
            "runs.csv": file(
                ["id", "mode", "clock", "started_at", "selected", "verified", "failed", "retries", "duration_seconds"],
                runs.map { r in
                    [String(r.id), r.mode.rawValue, Self.instant(r.nowMs), Self.instant(r.startedAtMs), String(r.selected ?? 0), String(r.verified ?? 0),
                     String(r.failed ?? 0), String(r.retries ?? 0), r.finishedAtMs.map { String(Double($0 - r.startedAtMs) / 1000) } ?? ""]
                }),
        ]
    }

    static func revenueHeader(_ period: String) -> [String] {
        [
            period, "currency", "transactions", "gross_milliunits", "refunds", "refunded_milliunits", "net_milliunits", "refund_rate_by_count",
            "refund_rate_by_money", "recoveries", "recovered_milliunits",
        ]
    }

    static func revenueLine(_ t: RevenueReport.Totals) -> [String] {
        [
            date(t.startMs), t.currency, String(t.transactions), String(t.grossMilliunits), String(t.refunds), String(t.refundedMilliunits),
            String(t.netMilliunits), t.refundRateByCount.map { String($0) } ?? "", t.refundRateByMoney.map { String($0) } ?? "",
            String(t.recoveries), String(t.recoveredMilliunits),
        ]
    }

    /// A CSV field, quoted when it must be (RFC 4180).
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
