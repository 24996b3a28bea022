import EntitlementCore
import Foundation

/// What `status-poller notifications catch-up` prints of each environment it read.
extension NotificationCatchUp.Report {
    /// "Production: 3 notification(s) in 1 page(s) from … through …: 2 applied, 1 duplicate".
    package var line: String {
        let outcomes = outcomeCounts.map { "\($0.count) \($0.outcome.rawValue)" }.joined(separator: ", ")
        return "\(environment.rawValue): \(records) notification(s) in \(pages) page(s) from \(Display.time(fromMs)) through \(Display.time(throughMs))"
            + (outcomes.isEmpty ? "" : ": \(outcomes)") + (refused > 0 ? "; \(refused) refused" : "")
    }

    /// The outcomes it counted, in ``NotificationOutcome``'s order: what both its lines list.
    var outcomeCounts: [(outcome: NotificationOutcome, count: Int)] {
        NotificationOutcome.allCases.compactMap { o in outcomes[o].map { (o, $0) } }
    }

    /// The reports as one JSON document, keys sorted, times as dates.
    package static func json(_ reports: [Self]) -> String {
        let rows: [[String: Any]] = reports.map { r in
            [
                "environment": r.environment.rawValue, "from": Display.time(r.fromMs), "through": Display.time(r.throughMs), "pages": r.pages,
                "records": r.records, "refused": r.refused,
                "outcomes": Dictionary(uniqueKeysWithValues: r.outcomes.map { ($0.key.rawValue, $0.value) }),
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys])) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
