/// The nightly run's catch-up as its text report shows it.
extension CatchUpSummary {
    /// "Production 3 in 1 page (applied 2, duplicate 1); Sandbox 0 in 1 page".
    public var line: String {
        var parts = environments.map { report in
            let outcomes = report.outcomeCounts.map { "\($0.outcome.rawValue) \($0.count)" }
            return "\(report.environment.rawValue) \(report.records) in \(report.pages) page\(report.pages == 1 ? "" : "s")"
                + (outcomes.isEmpty ? "" : " (\(outcomes.joined(separator: ", ")))") + (report.refused > 0 ? ", \(report.refused) refused" : "")
        }
        parts += failures.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) FAILED (\($0.value))" }
        return parts.joined(separator: "; ")
    }
}
