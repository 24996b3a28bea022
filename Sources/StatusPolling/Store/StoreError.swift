import Foundation

/// Problems opening or writing a database, each with what to do about it. `busy` and
/// `unwritable` happen to a run in progress (it aborts, exit 3); the others are configuration
/// errors found before anything is asked (exit 2).
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing(path: String)
    /// Migrations this binary knows are not applied yet: `current` is the latest applied (nil: none).
    case notMigrated(path: String, current: String?, required: String)
    /// The database holds migrations this binary does not know: a newer binary migrated it.
    case schemaTooNew(path: String, unknown: [String], known: String)
    /// Not a database at all, or damaged.
    case corrupt(path: String, reason: String)
    /// The file or its directory cannot be read or written by this user.
    case permissionDenied(path: String, reason: String)
    case unreadable(path: String, reason: String)
    /// A write failed in a way no retry of the same row fixes: the disk is full, the file became
    /// read-only or damaged. What was committed before is intact.
    case unwritable(path: String, reason: String)
    /// Another connection held a write lock for longer than the busy timeout: transient.
    case busy(path: String, seconds: TimeInterval)
    /// A database server (PostgreSQL) could not be reached, or dropped the connection: transient.
    case unreachable(path: String, reason: String)
    /// A database server refused the login or a privilege the poller needs.
    case rejected(path: String, reason: String)

    public var description: String {
        switch self {
        case .missing(let path):
            return "no database at \(path). Create it with `status-poller migrate --database \(path)`, or check the path."
        case .notMigrated(let path, let current, let required):
            return "the database at \(path) is at schema \(current.map { "'\($0)'" } ?? "none (an empty database)"); this status-poller needs '\(required)'. "
                + "Run `status-poller migrate --database \(path)` first."
        case .schemaTooNew(let path, let unknown, let known):
            return "the database at \(path) was migrated by a newer status-poller (\(unknown.map { "'\($0)'" }.joined(separator: ", "))); "
                + "this binary knows schema up to '\(known)'. Upgrade this binary; nothing was changed."
        case .corrupt(let path, let reason):
            return "the file at \(path) is not a status-poller database, or it is damaged (\(reason)). "
                + "Check that --database names the right file; restore it from a backup if it was. Nothing was changed."
        case .permissionDenied(let path, let reason):
            return "cannot use the database at \(path): \(reason). status-poller must be able to read and write the file and to create "
                + "files beside it (\(path)-wal, \(path)-shm, \(path).lock): check the permissions of the file and of its directory."
        case .unreadable(let path, let reason):
            return "cannot open the database at \(path): \(reason). Check the path, its permissions and that the disk is not full."
        case .unwritable(let path, let reason):
            return "the database at \(path) can no longer be written: \(reason) (disk full? permissions changed?). "
                + "What was written before is intact; the rows not written keep their columns and the next run verifies them."
        case .busy(let path, let seconds):
            return "the database at \(path) stayed locked by another writer for more than \(Int(seconds)) s (a long transaction in the web service, a migration, a backup?). Nothing was changed; try again when it is released."
        case .unreachable(let path, let reason):
            return "cannot reach the database server of \(path): \(reason). Check that the server runs and that the host, port and TLS settings (sslmode) are right. "
                + "What was written before is intact; rows not written keep their columns and the next run verifies them."
        case .rejected(let path, let reason):
            return "the database server of \(path) refused: \(reason). Check the user, its password (the URL, PGPASSWORD or ~/.pgpass) and its grants (docs/POSTGRESQL.md). Nothing was changed."
        }
    }
}

extension StoreError {
    /// The exit code a command ends with for this error.
    public var exitCode: RunExitCode {
        switch self {
        case .busy, .unwritable, .unreachable: return .aborted
        default: return .usage
        }
    }
}
