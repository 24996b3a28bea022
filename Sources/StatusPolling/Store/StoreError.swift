import Foundation

/// Problems opening a database, each with what to do about it. `busy` is transient (the run
/// aborts, exit 3); the others are configuration errors (exit 2).
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing(path: String)
    case notMigrated(path: String)
    case schemaTooNew(path: String)
    case unreadable(path: String, reason: String)
    /// Another connection held a write lock for longer than the busy timeout: transient.
    case busy(path: String, seconds: TimeInterval)

    public var description: String {
        switch self {
        case .missing(let path):
            return "no database at \(path). Create it with `status-poller migrate --database \(path)`, or check the path."
        case .notMigrated(let path):
            return "the database at \(path) has pending migrations. Run `status-poller migrate --database \(path)` first."
        case .schemaTooNew(let path):
            return "the database at \(path) was migrated by a newer status-poller. Upgrade this binary."
        case .busy(let path, let seconds):
            return "the database at \(path) stayed locked by another writer for more than \(Int(seconds)) s (a long transaction in the web service, a migration, a backup?). Nothing was changed; try again when it is released."
        case .unreadable(let path, let reason):
            return "cannot open the database at \(path): \(reason). Check the path, its permissions and that the disk is not full."
        }
    }
}

extension StoreError {
    /// The exit code a command ends with when the database cannot be opened.
    public var exitCode: RunExitCode {
        if case .busy = self { return .aborted }
        return .usage
    }
}
