/// A column of a shared statement that did not hold what its mapping reads: the SQL and the
/// mapping beside it disagree, or the schema does.
public enum ColumnReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// NULL where the schema never leaves one; the type the mapping reads.
    case null(String)
    /// An integer too large for the type read.
    case outOfRange(Int64, String)

    public var description: String {
        switch self {
        case .null(let type): "a NULL column where a \(type) was expected"
        case .outOfRange(let value, let type): "\(value) does not fit a \(type)"
        }
    }
}
