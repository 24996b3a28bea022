/// Errors that stop the whole run rather than one row.
public enum RunAbort: Error, Sendable, Equatable, CustomStringConvertible {
    /// The backend refused the poller's credentials; `detail` says which and what to check.
    case credentialsRejected(backend: StatusBackend, detail: String)

    public var description: String {
        switch self {
        case .credentialsRejected(_, let detail): return detail
        }
    }
}
