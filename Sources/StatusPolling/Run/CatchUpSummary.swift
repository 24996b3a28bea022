import EntitlementCore

/// What a nightly run read from Apple before its poll, under its lock: the notification history of
/// each environment, and the mass renewal-date extensions it asked after. A part of the run's one
/// report (`catch_up` in its JSON; absent when no catch-up ran, so the report of a run without
/// Server API credentials is what it always was).
public struct CatchUpSummary: Sendable, Equatable, Encodable {
    /// Each environment read through to the end.
    public var environments: [NotificationCatchUp.Report] = []
    /// Environments whose reading failed, with why: their checkpoint has not moved, and the poll
    /// asks every row in a window not fresh by `--fresh-within`.
    public var failures: [AppStoreEnvironment: String] = [:]
    /// Pending mass renewal-date extensions Apple was asked about, and how many of them completed.
    public var massExtensionsChecked = 0
    public var massExtensionsCompleted = 0
    /// Why Apple could not be asked about them (the next night, or `extend status`, asks again).
    public var massExtensionsFailure: String?

    public init() {}

    /// For each environment read without a gap, where its gapless reading began (the selection's
    /// ``SelectionWindows/coveredFrom``).
    public var coveredFrom: [String: Int64] {
        environments.reduce(into: [:]) { covered, report in covered[report.environment.rawValue] = report.coveredFromMs }
    }

    enum CodingKeys: String, CodingKey {
        case environments, failures, massExtensionsChecked = "mass_extensions_checked", massExtensionsCompleted = "mass_extensions_completed"
        case massExtensionsFailure = "mass_extensions_failure"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(environments, forKey: .environments)
        try c.encode(Dictionary(uniqueKeysWithValues: failures.map { ($0.key.rawValue, $0.value) }), forKey: .failures)
        try c.encode(massExtensionsChecked, forKey: .massExtensionsChecked)
        try c.encode(massExtensionsCompleted, forKey: .massExtensionsCompleted)
        try c.encodeIfPresent(massExtensionsFailure, forKey: .massExtensionsFailure)
    }
}

extension NotificationCatchUp.Report: Encodable {
    enum CodingKeys: String, CodingKey {
        case environment, fromMs = "from_ms", throughMs = "through_ms", pages, records, outcomes, refused, coveredFromMs = "covered_from_ms"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(environment.rawValue, forKey: .environment)
        try c.encode(fromMs, forKey: .fromMs)
        try c.encode(throughMs, forKey: .throughMs)
        try c.encode(pages, forKey: .pages)
        try c.encode(records, forKey: .records)
        try c.encode(Dictionary(uniqueKeysWithValues: outcomes.map { ($0.key.rawValue, $0.value) }), forKey: .outcomes)
        try c.encode(refused, forKey: .refused)
        try c.encode(coveredFromMs, forKey: .coveredFromMs)
    }
}
