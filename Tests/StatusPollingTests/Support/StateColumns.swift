import Foundation
import GRDB
import StatusPolling

/// The contract columns as SQLite holds them, derived from ``ContractColumn``: read by position in
/// the table's order (the writer reads one row per result and should not pay for a decoder or a
/// lookup by name), written as the table's values.
enum StateColumns {
    /// The contract columns, in the table's order.
    static let list = ContractColumn.list

    /// How many columns `list` names.
    static let count = ContractColumn.allCases.count

    /// `column = ?, …` for every contract column, in the order of ``arguments(_:)``.
    static let assignments = ContractColumn.allCases.map { "\($0.rawValue) = ?" }.joined(separator: ", ")

    /// One `?` per contract column.
    static let placeholders = Array(repeating: "?", count: count).joined(separator: ", ")

    /// The state's values in the table's order, for ``assignments`` or an INSERT of ``list``, then
    /// `extra`: one argument list built once (GRDB's initialiser from a sequence of values maps
    /// them through a key path, unspecialised: 3 % of a run's CPU for this list alone).
    static func arguments(_ state: SubscriptionState, then extra: [(any DatabaseValueConvertible)?] = []) -> StatementArguments {
        var values: [(any DatabaseValueConvertible)?] = []
        values.reserveCapacity(count + extra.count)
        for column in ContractColumn.allCases { values.append(convertible(column.value(in: state))) }
        values.append(contentsOf: extra)
        return StatementArguments(values)
    }

    /// A contract value as SQLite holds it: a flag as 0/1.
    static func convertible(_ value: ContractValue) -> (any DatabaseValueConvertible)? {
        switch value {
        case .text(let text): return text
        case .number(let number): return number
        case .flag(let flag): return flag.map { $0 ? 1 : 0 }
        case .time(let ms): return ms
        }
    }

    /// The state in `row`'s columns `start…start + count - 1`, in the table's order. Each column is
    /// read as a `DatabaseValue` (one concrete decode; a generic decode per kind instantiated its
    /// optional type's metadata for every column of every row).
    static func state(_ row: Row, from start: Int) -> SubscriptionState {
        var index = start
        return SubscriptionState { column in
            let value: DatabaseValue = row[index]
            index += 1
            switch (column.kind, value.storage) {
            case (.text, .string(let text)): return .text(text)
            case (.text, _): return .text(String.fromDatabaseValue(value))
            case (.number, .int64(let number)): return .number(Int(number))
            case (.number, _): return .number(Int.fromDatabaseValue(value))
            case (.flag, .int64(let flag)): return .flag(flag != 0)
            case (.flag, _): return .flag(Bool.fromDatabaseValue(value))
            case (.time, .int64(let ms)): return .time(ms)
            case (.time, _): return .time(Int64.fromDatabaseValue(value))
            }
        }
    }
}
