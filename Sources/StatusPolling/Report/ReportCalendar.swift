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

    /// The first of `ms`'s month, 00:00 UTC: the day of the month from the count of days since
    /// 1970 (the proleptic Gregorian civil-from-days conversion), then back to its first.
    static func startOfMonth(_ ms: Int64) -> Int64 {
        let days = startOfDay(ms) / dayMs
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        return (days - (dayOfMonth - 1)) * dayMs
    }

    /// The first of the month after `monthStartMs`'s.
    static func startOfNextMonth(_ monthStartMs: Int64) -> Int64 { startOfMonth(monthStartMs + 32 * dayMs) }
}
