/// RFC 3339 date-times ("2024-05-01T12:00:00Z") to and from Unix milliseconds: the dates of app
/// receipts, the command line's `--now` and `--since`, the events' timestamps, the run's clock.
/// Written by hand: a formatter per receipt or event would cost more than the work, Foundation's
/// parsers differ between platforms on the edge cases, and Foundation's ISO 8601 style builds a
/// calendar whose time zone loads ICU (3 MB more resident memory in a run that used it).
public enum RFC3339Timestamp {
    /// Milliseconds since 1970 for `text`, or nil when it is not an RFC 3339 date-time.
    public static func milliseconds(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var value: Int64 = 0
            for byte in b[i..<(i + count)] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            i += count
            return value
        }
        func expect(_ allowed: String) -> Bool {
            guard i < b.count, allowed.utf8.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2),
              expect("Tt "), let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 61 else { return nil }
        var millis: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var scale: Int64 = 100
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                millis += Int64(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offsetMinutes: Int64 = 0
        if expect("Zz") {
            offsetMinutes = 0
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let hours = digits(2), expect(":"), let minutes = digits(2), hours < 24, minutes < 60 else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let seconds = daysSinceEpoch(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1000 + millis
    }

    /// `ms` in UTC, `2026-11-27T18:12:25.123Z` (or `…25Z` without `fractionalSeconds`): the form
    /// of Foundation's `ISO8601FormatStyle`, and exact where Foundation, from a `Double` of
    /// seconds, writes 999 ms as ".998".
    public static func text(_ ms: Int64, fractionalSeconds: Bool = true) -> String {
        let (days, msOfDay) = ms.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, dayMs) = msOfDay < 0 ? (days - 1, msOfDay + 86_400_000) : (days, msOfDay)
        let (year, month, dayOfMonth) = civil(daysSinceEpoch: day)
        func padded(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        let seconds = "\(padded(year, 4))-\(padded(month, 2))-\(padded(dayOfMonth, 2))T\(padded(dayMs / 3_600_000, 2)):"
            + "\(padded(dayMs / 60_000 % 60, 2)):\(padded(dayMs / 1_000 % 60, 2))"
        return fractionalSeconds ? "\(seconds).\(padded(dayMs % 1_000, 3))Z" : seconds + "Z"
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`):
    /// the report's months use it too.
    public static func civil(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    public static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
