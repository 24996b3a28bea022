import AppStoreSimulator
import EntitlementCore
import Foundation
import StatusPolling

extension Demo.Night {
    /// One line per night: what changed, what it cost, whether every row agrees with the truth;
    /// with worker processes, then the rows each one verified.
    public var line: String {
        let t = report.transitions
        let date = Date(timeIntervalSince1970: Double(clockMs) / 1000).formatted(.iso8601.year().month().day())
        let verdict = check.disagreements.isEmpty ? "ok" : "\(check.disagreements.count) DISAGREE"
        func n(_ value: Int, _ width: Int = 4) -> String { String(value).leftPadded(to: width) }
        return "night \(String(number).leftPadded(to: 2)) \(date)\(faulty ? " " : "*")"
            + " selected \(n(report.selected, 5))"
            + " lapsed \(n(report.selectedLapsed))"
            + " renewed \(n(t[.renewed, default: 0]))"
            + " grace+ \(n(t[.enteredGrace, default: 0], 3))"
            + " retry+ \(n(t[.enteredBillingRetry, default: 0], 3))"
            + " recovered \(n(t[.recovered, default: 0], 3))"
            + " expired \(n(t[.expired, default: 0], 3))"
            + " refunded \(n(t[.refunded, default: 0], 2))"
            + " upgraded \(n(t[.upgraded, default: 0], 2))"
            + " new \(n(t[.firstVerified, default: 0]))"
            + " retries \(n(report.retries))"
            + " failed \(n(report.failed, 3))"
            + " locked-out \(n(check.lockedOut, 3))"
            + "  truth: \(verdict)"
            + (workers.isEmpty ? "" : "  by worker " + workers.map { String($0.report.verified) }.joined(separator: "/"))
            + (notifications.posted + notifications.lost == 0 ? "" : "  notified \(notifications.delivered)/\(notifications.posted + notifications.lost) fresh \(report.skippedFresh)")
            + (catchUpRequests == 0 ? "" : " history \(catchUpRequests)")
    }
}

extension Demo.Outcome {
    /// The closing table: entitlement states, the final agreement check, and what was injected.
    public var summary: String {
        var lines: [String] = []
        let total = states.values.reduce(0, +)
        lines.append("")
        lines.append("Entitlements after the last night (as the web service's `entitlements` view computes them):")
        for state in EntitlementState.allCases {
            let count = states[state, default: 0]
            let share = total == 0 ? 0 : Double(count) * 100 / Double(total)
            lines.append("  \(state.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)) \(String(count).leftPadded(to: 6))  \(String(format: "%5.1f", share)) %  \(state.isEntitled ? "entitled" : "")")
        }
        let faultyNights = nights.filter(\.faulty)
        let failures = faultyNights.map(\.report.failed).reduce(0, +)
        lines.append("")
        let serverAPIRequests = simulator.serverAPIRequests.values.reduce(0, +)
        lines.append("Faults: \(simulator.faults) of \(simulator.requests) verifyReceipt requests and \(simulator.serverAPIFaults) of \(serverAPIRequests) App Store Server API requests were faults or outage answers;")
        lines.append("  \(failures) verifications still failed after retries; every one kept its row's previous columns.")
        lines.append("")
        let requests = nights.map(\.report.requests).reduce(0, +)
        let lapsed = nights.map(\.report.selectedLapsed).reduce(0, +)
        let lockedOut = nights.map(\.check.lockedOut).reduce(0, +)
        lines.append("Requests to the App Store over the nights: \(requests.formatted()); rows asked only on their turn in the lapsed sweep: \(lapsed.formatted()).")
        lines.append("Paying users locked out (Apple entitles them, their row does not): \(final.lockedOut) after the last night; \(lockedOut.formatted()) row-nights in all")
        lines.append("  (a failed verification keeps a row as it was; a comeback outside the app waits for the row's next turn).")
        lines.append(comebacks.summary)
        lines.append(lag.summary)
        if let events {
            lines.append("")
            lines += events.lines(downNight: eventsDownNight)
        }
        if let consumption {
            lines.append("")
            lines += consumption.lines
        }
        let check = final
        let agreeing = check.rows - Set(check.disagreements.map(\.subscriptionID)).count
        lines.append("")
        lines.append("Truth check after the final, fault-free night: \(agreeing.formatted()) / \(check.rows.formatted()) subscriptions agree")
        lines.append("  (\(check.verifiedTonight.formatted()) verified tonight and equal to the App Store now; \(check.untouched.formatted()) not due tonight and equal to it at their last verification; \(check.current.formatted()) equal to it now).")
        if check.notified != nil {
            lines.append("With notifications every row must equal the App Store now: \(check.current.formatted()) do; \(check.failedTonight.formatted()) failed tonight and kept their columns; \(check.awaitingApple.formatted()) wait for a notification Apple has not sent yet (or, with V1, not delivered, or a renewal preference V1 cannot date).")
        }
        lines += ledger.lines
        lines.append("Rows that differ from the App Store now and that no later night will select (the poller stopped watching them): \(check.unwatched.count)")
        for row in check.unwatched.prefix(20) { lines.append("  \(row)") }
        if check.unwatched.count > 20 { lines.append("  … and \(check.unwatched.count - 20) more") }
        let all = disagreements
        if all.isEmpty {
            lines.append("Every row agreed with the simulator's truth after every night.")
        } else {
            lines.append("\(all.count) disagreements:")
            for disagreement in all.prefix(50) { lines.append("  \(disagreement)") }
            if all.count > 50 { lines.append("  … and \(all.count - 50) more") }
        }
        return lines.joined(separator: "\n")
    }
}

extension EntitlementLag {
    /// p50, p95 and max of the lags, all events and refunds and recoveries apart, then by event.
    public var summary: String {
        func line(_ name: String, _ lags: [Int64], width: Int = 11) -> String {
            guard let p = Self.percentiles(lags) else { return "  \(name): none" }
            return "  \(name.padding(toLength: width, withPad: " ", startingAt: 0)) \(String(lags.count).leftPadded(to: 6))  p50 \(Self.text(p.p50))  p95 \(Self.text(p.p95))  max \(Self.text(p.max))"
        }
        let kinds = LifecycleEvent.Kind.allCases.filter { byKind[$0] != nil }.map { line("  " + $0.rawValue, byKind[$0]!, width: 28) }
        return (["Entitlement lag (simulated time from each App Store event until its row reflected it):",
            line("all events", all), line("refunds", refunds), line("recoveries", recoveries),
            "  by event (refund requests, declines and refunds of an earlier period change no column and count in no line above):"] + kinds
            + (unreflected > 0 ? ["  \(unreflected) events not reflected by the last night (their rows' next window is later)"] : []))
            .joined(separator: "\n")
    }

    /// A duration of simulated time, in the unit that reads best.
    static func text(_ ms: Int64) -> String {
        switch ms {
        case ..<60_000: String(format: "%.0f s", Double(ms) / 1000)
        case ..<3_600_000: String(format: "%.0f min", Double(ms) / 60_000)
        case ..<172_800_000: String(format: "%.1f h", Double(ms) / 3_600_000)
        default: String(format: "%.1f d", Double(ms) / 86_400_000)
        }
    }
}

extension Demo {
    /// Polling only beside notifications, for the same seed: what a night costs and how fresh rows are.
    public static func comparison(polling: Outcome, notified: Outcome) -> String {
        func perNight(_ outcome: Outcome) -> Double {
            Double(outcome.nights.map(\.appleRequests).reduce(0, +)) / Double(max(1, outcome.nights.count))
        }
        func p95(_ lags: [Int64]) -> String { EntitlementLag.percentiles(lags).map { EntitlementLag.text($0.p95) } ?? "–" }
        let a = perNight(polling), b = perNight(notified)
        return [
            "",
            "Polling only vs with notifications (same seed):",
            "  Apple requests per night     \(String(format: "%8.0f", a))  \(String(format: "%8.0f", b))  (\(String(format: "%.2f", b / max(a, 1)))×)",
            "  lag p95, all events          \(p95(polling.lag.all).leftPadded(to: 8))  \(p95(notified.lag.all).leftPadded(to: 8))",
            "  lag p95, refunds             \(p95(polling.lag.refunds).leftPadded(to: 8))  \(p95(notified.lag.refunds).leftPadded(to: 8))",
            "  lag p95, recoveries          \(p95(polling.lag.recoveries).leftPadded(to: 8))  \(p95(notified.lag.recoveries).leftPadded(to: 8))",
            "  truth                        \((polling.passed ? "agrees" : "DISAGREES").leftPadded(to: 8))  \((notified.passed ? "agrees" : "DISAGREES").leftPadded(to: 8))",
        ].joined(separator: "\n")
    }
}

extension ComebackWatch {
    /// How long resubscriptions outside the app went unseen, on the simulated clock.
    public var summary: String {
        func days(_ ms: Int64?) -> String { ms.map { String(format: "%.1f d", Double($0) / 86_400_000) } ?? "–" }
        var text = "Resubscriptions outside the app (no receipt upload): \(comebacks.count); seen in their row after"
            + " p50 \(days(lag(percentile: 50))), p95 \(days(lag(percentile: 95))), max \(days(lags.last))"
        let waiting = unseen
        if let oldest = waiting.map(\.atMs).min(), let last = lastLookMs {
            text += "; \(waiting.count) not seen yet (the oldest bought \(days(last - oldest)) before the last night)"
        }
        return text + "."
    }
}

extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
