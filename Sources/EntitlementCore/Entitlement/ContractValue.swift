/// One contract column's value, typed so each view can show times and flags its own way.
public enum ContractValue: Sendable, Equatable {
    case text(String?)
    case number(Int?)
    case flag(Bool?)
    /// Milliseconds since 1970.
    case time(Int64?)

    /// What a column holds, and so its SQL type in each store.
    public enum Kind: Sendable {
        case text, number, flag, time

        /// The declared type in SQLite's schema.
        public var sqliteType: String { self == .text ? "TEXT" : "INTEGER" }

        /// The declared type in PostgreSQL's schema (a flag is 0/1 in a `smallint`, as in SQLite).
        public var postgresType: String {
            switch self {
            case .text: return "text"
            case .number: return "integer"
            case .flag: return "smallint"
            case .time: return "bigint"
            }
        }
    }

    /// The value as text, NULL when absent; `time` and `flag` choose how those read.
    public func text(time: (Int64) -> String = { String($0) }, flag: (Bool) -> String = { String($0) }) -> String {
        switch self {
        case .text(let value): return value ?? "NULL"
        case .number(let value): return value.map(String.init) ?? "NULL"
        case .flag(let value): return value.map(flag) ?? "NULL"
        case .time(let value): return value.map(time) ?? "NULL"
        }
    }

    /// Whether the column holds NULL.
    public var isNull: Bool {
        switch self {
        case .text(let value): value == nil
        case .number(let value): value == nil
        case .flag(let value): value == nil
        case .time(let value): value == nil
        }
    }

    /// The text, when this is a text value.
    public var text: String? { if case .text(let value) = self { value } else { nil } }
    /// The number, when this is a number value.
    public var number: Int? { if case .number(let value) = self { value } else { nil } }
    /// The flag, when this is a flag value.
    public var flag: Bool? { if case .flag(let value) = self { value } else { nil } }
    /// The milliseconds, when this is a time value.
    public var time: Int64? { if case .time(let value) = self { value } else { nil } }

    /// The value as a JSON literal: a flag as 0/1 when `flagsAsNumbers` (a store's column), else
    /// as `true`/`false` (the audit trail's snapshots).
    /// Appends ``json(flagsAsNumbers:)`` to `out` without building it apart.
    public func appendJSON(to out: inout String, flagsAsNumbers: Bool) {
        switch self {
        case .text(let value): JSONText.append(value, to: &out)
        // `description` of a concrete integer: `String(_:)` over a generic one went through the
        // unspecialised radix conversion.
        case .number(let value): out.append(value?.description ?? "null")
        case .flag(let value): out.append(flagsAsNumbers ? (value.map { $0 ? "1" : "0" } ?? "null") : JSONText.bool(value))
        case .time(let value): out.append(value?.description ?? "null")
        }
    }

    public func json(flagsAsNumbers: Bool) -> String {
        switch self {
        case .text(let value): return JSONText.quoted(value)
        case .number(let value): return JSONText.number(value)
        case .flag(let value): return flagsAsNumbers ? JSONText.number(value.map { $0 ? 1 : 0 }) : JSONText.bool(value)
        case .time(let value): return JSONText.number(value)
        }
    }
}
