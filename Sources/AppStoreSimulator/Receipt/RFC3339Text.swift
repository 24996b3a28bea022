/// Writes receipt dates as Apple does, RFC 3339 in UTC ("2024-05-01T12:00:00Z"), with a
/// millisecond fraction only when there is one so no instant is rounded. By hand, not with a
/// Foundation formatter: receipts are built for every subscriber every simulated night.
enum RFC3339Text {
    /// The ASCII bytes of the date, written digit by digit.
    static func bytes(ms: Int64) -> [UInt8] {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = ms - seconds * 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(daysSinceEpoch: days)
        var out: [UInt8] = []
        out.reserveCapacity(24)
        digits(year, 4, &out); out.append(0x2D)
        digits(month, 2, &out); out.append(0x2D)
        digits(day, 2, &out); out.append(0x54)
        digits(secondOfDay / 3600, 2, &out); out.append(0x3A)
        digits(secondOfDay / 60 % 60, 2, &out); out.append(0x3A)
        digits(secondOfDay % 60, 2, &out)
        if millis != 0 {
            out.append(0x2E)
            digits(millis, 3, &out)
        }
        out.append(0x5A)
        return out
    }

    /// The text of ``bytes(ms:)``.
    static func string(ms: Int64) -> String { String(decoding: bytes(ms: ms), as: UTF8.self) }

    /// The proleptic Gregorian date of a day count from 1970-01-01 (H. Hinnant's `civil_from_days`).
    static func civil(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `value` in decimal, zero-padded to `width` digits (years past 9999 get more).
    private static func digits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        var reversed: [UInt8] = []
        var rest = value
        repeat {
            reversed.append(0x30 + UInt8(rest % 10))
            rest /= 10
        } while rest > 0 || reversed.count < width
        out.append(contentsOf: reversed.reversed())
    }
}
