/// Why a prune stopped, with what to do.
public enum RetentionError: Error, CustomStringConvertible, Equatable {
    /// The archive folder or one of its files could not be written: nothing more was deleted.
    case archive(String)

    public var description: String {
        switch self {
        case .archive(let reason): "archive: \(reason)"
        }
    }
}
