/// The two SQL dialects the stores speak, for the few places where a statement both share must
/// be spelled differently. Everything else in a ``SQLStatement`` is text both accept.
public enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// The `n`th value's placeholder (from 1): SQLite binds `?` in order; PostgreSQL numbers them.
    public func placeholder(_ n: Int) -> String {
        switch self {
        case .sqlite: "?"
        case .postgres: "$\(n)"
        }
    }

    /// The larger of two values: SQLite's scalar `max`, PostgreSQL's `GREATEST` (its `max` only
    /// aggregates).
    public func greatest(_ a: SQLStatement, _ b: SQLStatement) -> SQLStatement {
        switch self {
        case .sqlite: "max(\(a), \(b))"
        case .postgres: "GREATEST(\(a), \(b))"
        }
    }

    /// What ends a subquery the planner must keep as written (not merged into the query around
    /// it): its rows leave in its `ORDER BY`, and what the query around computes per row is
    /// computed in that order. SQLite needs a `LIMIT` before an `OFFSET`; PostgreSQL refuses a
    /// negative one.
    public var fence: String {
        switch self {
        case .sqlite: "LIMIT -1 OFFSET 0"
        case .postgres: "OFFSET 0"
        }
    }
}
