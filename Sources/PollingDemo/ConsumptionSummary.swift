import AppStoreSimulator
import StatusPolling

/// What the demo's refund requests came to: the store's record of the requests and answers, and
/// the simulator's truth of the decisions the answers weighed on.
public struct ConsumptionSummary: Sendable, Equatable {
    public var counts: ConsumptionCounts
    /// Apple's decisions recorded on the requests (a later REFUND / REFUND_DECLINED), by whether an
    /// answer was sent and the preference in it ("none" without one).
    public var granted: [String: Int] = [:]
    public var decided: [String: Int] = [:]
    /// Answers that turned a planned refund into a decline, in the simulator's truth.
    public var turned = 0

    init(_ records: [ConsumptionRequestRecord], answers: [SimulatedConsumptionAnswer]) {
        counts = ConsumptionCounts(records)
        for r in records {
            guard let decision = r.decision else { continue }
            let key = r.state == .sent ? "answered, \(r.refundPreference?.rawValue ?? "no preference")" : "unanswered"
            decided[key, default: 0] += 1
            if decision == "refunded" { granted[key, default: 0] += 1 }
        }
        turned = answers.filter { $0.plannedDecision == "refunded" && $0.decision == "declined" }.count
    }

    /// The demo's lines.
    public var lines: [String] {
        var lines = [
            "Refund requests (CONSUMPTION_REQUEST) for rows held: \(counts.requests); answered \(counts.sent) (on time \(counts.onTime), late \(counts.late)), "
                + "without consent \(counts.noConsent), expired \(counts.expired), refused by Apple \(counts.refused), pending \(counts.pending).",
        ]
        let keys = decided.keys.sorted()
        if keys.isEmpty {
            lines.append("  No decision of Apple's seen yet.")
        } else {
            lines.append("  Refunds granted, of Apple's decisions seen: " + keys.map { "\($0) \(granted[$0, default: 0]) of \(decided[$0]!)" }.joined(separator: "; ") + ".")
        }
        lines.append("  The simulator's truth: \(turned) answer(s) turned a planned refund into a decline.")
        return lines
    }
}
