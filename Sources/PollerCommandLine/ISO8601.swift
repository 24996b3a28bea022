import EntitlementCore
import Foundation

/// The command line's dates: ISO 8601 date-times with or without fractional seconds, or a plain
/// date (midnight UTC). Read by `RFC3339Timestamp`, not Foundation's ISO 8601 style, whose
/// calendar loads ICU's time zones even for a date that names its own offset.
package enum ISO8601 {
    package static func parse(_ text: String) -> Date? {
        unixMilliseconds(text).map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    /// Milliseconds since 1970 for `text`, now when it is nil (a date that does not parse was
    /// refused by the command's validation first).
    package static func milliseconds(_ text: String?) -> Int64 {
        text.flatMap(unixMilliseconds) ?? Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// Milliseconds since 1970 for a date-time, or for a plain date's midnight UTC; nil otherwise.
    package static func unixMilliseconds(_ text: String) -> Int64? {
        RFC3339Timestamp.milliseconds(text) ?? (text.utf8.count == 10 ? RFC3339Timestamp.milliseconds(text + "T00:00:00Z") : nil)
    }
}
