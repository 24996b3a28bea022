import Foundation

/// Reads `Retry-After` in the three forms seen: the App Store Server API's UNIX time in
/// milliseconds, HTTP's delay in seconds, and an HTTP date. Returns the wait from `now`.
enum RetryAfter {
    static func wait(_ value: String?, now: Date) -> Duration? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if let number = Double(text), number.isFinite, number >= 0 {
            // A number this large is an instant in ms (Apple's form); a small one is seconds.
            if number > 100_000_000_000 { return clamp((number - now.timeIntervalSince1970 * 1000) / 1000) }
            return clamp(number)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return clamp(date.timeIntervalSince(now))
    }

    /// Never negative, never more than a day (the retry policy caps it further).
    private static func clamp(_ seconds: Double) -> Duration {
        .milliseconds(Int64(min(max(seconds, 0), 86_400) * 1000))
    }
}
