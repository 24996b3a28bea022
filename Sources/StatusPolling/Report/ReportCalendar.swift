import EntitlementCore

/// Days, weeks (Monday 00:00) and months of the report, in UTC, by arithmetic: the builder asks for
/// them several times per trail row, where a `Calendar` would cost more than the rest of the row.
enum ReportCalendar {
    static let dayMs: Int64 = 86_400_000

    static func startOfDay(_ ms: Int64) -> Int64 { ms - ((ms % dayMs) + dayMs) % dayMs }

    /// Monday 00:00 UTC of `ms`'s week (1970-01-05 was a Monday).
    static func startOfWeek(_ ms: Int64) -> Int64 {
        let day = startOfDay(ms) / dayMs
        return (day - (((day - 4) % 7) + 7) % 7) * dayMs
    }

    /// The first of `ms`'s month, 00:00 UTC: back from the day to the first of its month.
    static func startOfMonth(_ ms: Int64) -> Int64 {
        let days = startOfDay(ms) / dayMs
        return (days - (RFC3339Timestamp.civil(daysSinceEpoch: days).day - 1)) * dayMs
    }

    /// The first of the month after `monthStartMs`'s.
    static func startOfNextMonth(_ monthStartMs: Int64) -> Int64 { startOfMonth(monthStartMs + 32 * dayMs) }
}
