/// How a run ended, in the run history.
public enum RunStatus: String, Sendable, Codable {
    case running
    case finished
    /// Stopped by SIGTERM/SIGINT; a backfill resumes from its checkpoint.
    case interrupted
    /// Stopped early: the App Store refused the credentials, or the store was unreadable.
    case aborted
}
