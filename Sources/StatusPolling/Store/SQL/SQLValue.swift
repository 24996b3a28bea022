import EntitlementCore

/// A value bound to a ``SQLStatement``: the shared SQL binds text and integers only (a boolean as
/// 0 or 1, as SQLite stores it and the PostgreSQL schema's flags are), so both stores bind it the
/// same way.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
}

extension SQLValue {
    /// Text, or NULL.
    public init(_ value: String?) { self = value.map(SQLValue.text) ?? .null }

    /// An integer, or NULL.
    public init(_ value: Int64?) { self = value.map(SQLValue.integer) ?? .null }

    /// An integer, or NULL.
    public init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }

    /// A flag as both stores hold it: 0 or 1, or NULL.
    public init(_ value: Bool?) { self.init(value.map { $0 ? 1 : 0 }) }

    /// A contract value as both stores hold it: a flag as 0/1.
    public init(_ value: ContractValue) {
        switch value {
        case .text(let text): self.init(text)
        case .number(let number): self.init(number)
        case .flag(let flag): self.init(flag)
        case .time(let ms): self.init(ms)
        }
    }
}
