import Foundation

extension TrailReport {
    /// The report as one JSON document (keys sorted): the numbers of the page, for other tools.
    /// Shares are fractions 0…1; days are ISO 8601 dates (UTC), instants ISO 8601 UTC.
    public func json() throws -> String {
        let counts = episodeCounts
        let episodesObject: [String: Any] = [
            "total": episodes.total, "recovered": counts["recovered"] ?? 0, "lost": counts["lost"] ?? 0,
            "cancelled": counts["cancelled"] ?? 0, "refunded": counts["refunded"] ?? 0, "open": counts["open"] ?? 0,
            "recovered_in_grace": episodes.recoveredInGrace,
            "recovered_by_day": Dictionary(uniqueKeysWithValues: Self.headlineDays.map { (String($0), curve.recovered(by: $0)) }),
            "median_days_to_recover": medianDaysToRecover.map { $0 as Any } ?? NSNull(),
            "median_detection_lag_days": episodes.medianDetectionLagDays.map { $0 as Any } ?? NSNull(),
        ]
        func lag(_ lag: Lag) -> [String: Any] {
            [
                "count": lag.count, "p50_seconds": lag.p50Seconds.map { $0 as Any } ?? NSNull(),
                "p95_seconds": lag.p95Seconds.map { $0 as Any } ?? NSNull(), "max_seconds": lag.maxSeconds.map { $0 as Any } ?? NSNull(),
            ]
        }
        let object: [String: Any] = [
            "generated_at": Self.instant(generatedAtMs), "from": Self.date(fromMs), "to": Self.date(toMs - 1),
            "trail_starts_at": trailStartsAtMs.map { Self.instant($0) as Any } ?? NSNull(),
            "environment": environment ?? "all", "poll_interval_hours": pollIntervalHours.map { $0 as Any } ?? NSNull(),
            "episodes": episodesObject,
            "recovery_curve": curve.points.map { point -> [String: Any] in
                ["day": point.day, "recovered": point.recovered, "lost": point.lost, "cancelled": point.cancelled, "refunded": point.refunded, "at_risk": point.atRisk]
            },
            "state_mix": stateMix.map { day -> [String: Any] in
                var row: [String: Any] = ["date": Self.date(day.dateMs)]
                for state in StateMix.State.allCases { row[state.rawValue] = day.counts[state.rawValue] ?? 0 }
                return row
            },
            "churn": churn.map { period -> [String: Any] in
                [
                    "period": period.kind, "start": Self.date(period.startMs), "active_at_start": period.activeAtStart, "churned": period.churned,
                    "rate": period.rate.map { $0 as Any } ?? NSNull(), "by_intent": period.byIntent,
                ]
            },
            "movement": movement.map { week -> [String: Any] in
                var row: [String: Any] = ["week": Self.date(week.startMs)]
                for name in Self.movementNames { row[name] = week.counts[name] ?? 0 }
                return row
            },
            "refunds": refunds.map { ["date": Self.date($0.dateMs), "refunds": $0.refunds, "renewals_and_new": $0.renewals] as [String: Any] },
            "refund_rate": refundRates.map { week -> [String: Any] in
                ["week": Self.date(week.startMs), "refunds": week.refunds, "renewals_and_new": week.paid, "rate": week.rate.map { $0 as Any } ?? NSNull()]
            },
            "notification_lag": lag(notificationLag),
            "refund_requests": [
                "answered_share": refundRequests.answeredShare.map { $0 as Any } ?? NSNull(),
                "weeks": refundRequests.weeks.map { week -> [String: Any] in
                    [
                        "week": Self.date(week.startMs), "requests": week.requests, "answered": week.answered, "no_consent": week.noConsent,
                        "expired": week.expired, "refunded": week.refunded, "declined": week.declined,
                    ]
                },
                "by_preference": refundRequests.byPreference.map { o -> [String: Any] in
                    ["preference": o.preference, "requests": o.requests, "refunded": o.refunded, "declined": o.declined, "undecided": o.undecided]
                },
            ] as [String: Any],
            "revenue": revenueObject,
            "sources": sources.map { week -> [String: Any] in
                var row: [String: Any] = ["week": Self.date(week.startMs), "notification_lag": lag(week.notificationLag)]
                for name in Self.sourceNames { row[name] = week.counts[name] ?? 0 }
                return row
            },
            "runs": runs.map { run -> [String: Any] in
                [
                    "id": run.id, "mode": run.mode.rawValue, "clock": Self.instant(run.nowMs), "started_at": Self.instant(run.startedAtMs),
                    "selected": run.selected ?? 0, "verified": run.verified ?? 0, "failed": run.failed ?? 0, "retries": run.retries ?? 0,
                    "duration_seconds": run.finishedAtMs.map { Double($0 - run.startedAtMs) / 1000 as Any } ?? NSNull(),
                    "version": run.version.map { $0 as Any } ?? NSNull(),
                ]
            },
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// The ledger's money (``RevenueReport``): amounts in milliunits of their currency, each line one currency.
    private var revenueObject: [String: Any] {
        func totals(_ t: RevenueReport.Totals, _ key: String) -> [String: Any] {
            [
                key: Self.date(t.startMs), "currency": t.currency, "transactions": t.transactions, "gross_milliunits": t.grossMilliunits,
                "refunds": t.refunds, "refunded_milliunits": t.refundedMilliunits, "net_milliunits": t.netMilliunits,
                "recoveries": t.recoveries, "recovered_milliunits": t.recoveredMilliunits,
                "refund_rate_by_count": t.refundRateByCount.map { $0 as Any } ?? NSNull(),
                "refund_rate_by_money": t.refundRateByMoney.map { $0 as Any } ?? NSNull(),
            ]
        }
        return [
            "days": revenue.days.map { totals($0, "date") },
            "months": revenue.months.map { totals($0, "month") },
            "price_unknown": revenue.priceUnknown.map {
                ["date": Self.date($0.dateMs), "sales": $0.sales, "refunds": $0.refunds, "recoveries": $0.recoveries] as [String: Any]
            },
            "offers": revenue.offers.map { o -> [String: Any] in
                [
                    "month": Self.date(o.monthMs), "offer_type": o.offerType, "discount_type": o.discountType, "starts": o.starts,
                    "converted": o.converted, "conversion": o.conversion.map { $0 as Any } ?? NSNull(),
                ]
            },
            "monthly_recurring_revenue": revenue.monthlyRecurringRevenue.map { m -> [String: Any] in
                ["at": Self.instant(m.atMs), "currency": m.currency, "subscriptions": m.subscriptions, "milliunits": m.milliunits]
            },
            "mrr_movement": revenue.mrrMovement.map { m -> [String: Any] in
                var line: [String: Any] = ["month": Self.date(m.monthMs), "currency": m.currency, "net_milliunits": m.netMilliunits]
                for (name, change) in m.changes { line[name] = ["subscriptions": change.subscriptions, "milliunits": change.milliunits] }
                return line
            },
        ]
    }

    /// The movement's series, in the order the page draws them.
    public static let movementNames = ["new", "renewed", "recovered", "upgraded", "entered_billing_trouble", "expired", "refunded"]

    public static func date(_ ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601.year().month().day())
    }

    public static func instant(_ ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601)
    }
}
