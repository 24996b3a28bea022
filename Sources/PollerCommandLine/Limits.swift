import StatusPolling

/// The library's ranges and defaults as the command line shows them in `--help` and errors.
package enum Limits {
    package static let concurrency = PollRun.Configuration.allowedConcurrency

    /// "10" for 10 s, "0.5" for 500 ms.
    package static func seconds(_ duration: Duration) -> String {
        let seconds = duration.totalSeconds
        return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// "48" for two days.
    package static func hours(_ duration: Duration) -> String {
        let hours = duration.totalSeconds / 3600
        return hours == hours.rounded() ? String(Int(hours)) : String(hours)
    }

    /// "7" for a week (whole days).
    package static func days(_ duration: Duration) -> Int { Int(duration.totalSeconds / 86400) }
}
