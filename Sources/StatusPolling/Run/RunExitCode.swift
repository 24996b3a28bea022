/// Exit codes of `status-poller run` and `backfill` (the operator commands use 0, 1, 2 and 3 the
/// same way). The one table: the report's "exit" line, `--help` and the README's table (checked
/// by a test) all come from here.
public enum RunExitCode: Int32, Sendable, CaseIterable {
    /// Every selected subscription was verified.
    case success = 0
    /// The run finished, but some subscriptions could not be verified (their access is unchanged).
    case someFailed = 1
    /// A bad flag, a missing secret, an unreadable or unmigrated database.
    case usage = 2
    /// The run stopped early: the App Store refused the credentials or kept failing (the circuit
    /// breaker), or the store could not be read.
    case aborted = 3
    /// Stopped by SIGTERM/SIGINT or at `--deadline`; what was done is written; a backfill resumes
    /// with `--resume`.
    case interrupted = 4
    /// Another run holds the lock (EX_TEMPFAIL: try again later).
    case locked = 75

    /// One short line, for the report's "exit" line.
    public var meaning: String {
        switch self {
        case .success: return "every selected subscription was verified"
        case .someFailed: return "the run finished but some subscriptions failed; their access is unchanged"
        case .usage: return "usage or configuration error"
        case .aborted: return "the run was aborted"
        case .interrupted: return "stopped by a signal or the deadline; what was done is written"
        case .locked: return "another run holds the lock"
        }
    }

    /// What it means and what to do, for `--help` and the README.
    public var explanation: String {
        switch self {
        case .success:
            return "every selected subscription was verified"
        case .someFailed:
            return "the run finished, but some subscriptions failed — their access is unchanged; see the report"
        case .usage:
            return "usage or configuration error: bad flag, missing secret, missing, unreadable or unmigrated database"
        case .aborted:
            return "run aborted: Apple answered 21004 (wrong shared secret), the App Store kept failing (the circuit breaker: most of the last subscriptions failed with timeouts, 5xx, outage pages or retryable statuses), or the database could not be read or written (a full disk, or held locked by another writer for more than the 10 s busy timeout) — no access was taken away; the next run picks up as usual"
        case .interrupted:
            return "stopped by SIGTERM/SIGINT or at `--deadline`: no new row was started, requests in flight had 3 s to finish, what was done is written; a backfill resumes with `--resume`"
        case .locked:
            return "another run holds the lock (SQLite: the database's `DB.lock`; PostgreSQL: the same `--worker-name`); this run did nothing — try again later"
        }
    }

    /// The table for `--help`: one line per code.
    public static var helpTable: String {
        "Exit codes:\n" + allCases.map { code in
            let number = String(code.rawValue)
            return String(repeating: " ", count: 3 - number.count) + number + "  " + code.explanation.filter { $0 != "`" }
        }.joined(separator: "\n")
    }

    /// The README's table, in Markdown.
    public static var markdownTable: String {
        (["| code | meaning |", "|---|---|"] + allCases.map { "| \($0.rawValue) | \($0.explanation) |" }).joined(separator: "\n")
    }
}
