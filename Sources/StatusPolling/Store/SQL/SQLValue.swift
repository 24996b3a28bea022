/// A value bound to a ``SQLStatement``: the shared SQL binds text and integers only (a boolean as
/// 0 or 1, as SQLite stores it and the PostgreSQL schema's flags are), so both stores bind it the
/// same way.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
}
