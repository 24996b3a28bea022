import Foundation

/// ISO 8601 with or without fractional seconds, or a plain date (midnight UTC).
package enum ISO8601 {
    package static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().year().month().day().parse(text)
    }

    package static func milliseconds(_ text: String?) -> Int64 {
        let date = text.flatMap(parse) ?? Date()
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
