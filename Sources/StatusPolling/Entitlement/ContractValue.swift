/// One contract column's value, typed so each view can show times and flags its own way.
public enum ContractValue: Sendable, Equatable {
    case text(String?)
    case number(Int?)
    case flag(Bool?)
    /// Milliseconds since 1970.
    case time(Int64?)

    /// The value as text, NULL when absent; `time` and `flag` choose how those read.
    public func text(time: (Int64) -> String = { String($0) }, flag: (Bool) -> String = { String($0) }) -> String {
        switch self {
        case .text(let value): return value ?? "NULL"
        case .number(let value): return value.map(String.init) ?? "NULL"
        case .flag(let value): return value.map(flag) ?? "NULL"
        case .time(let value): return value.map(time) ?? "NULL"
        }
    }
}
