import EntitlementCore
import GRDB
import StatusPolling

/// The contract columns as SQLite holds them, for arranging rows in tests as a web service (or an
/// earlier run) left them.
enum StateColumns {
    /// One `?` per contract column.
    static let placeholders = Array(repeating: "?", count: ContractColumn.allCases.count).joined(separator: ", ")

    /// The state's values in the table's order, for an INSERT of ``ContractColumn/list``.
    static func arguments(_ state: SubscriptionState) -> StatementArguments {
        StatementArguments(ContractColumn.allCases.map { column -> (any DatabaseValueConvertible)? in
            switch column.value(in: state) {
            case .text(let text): text
            case .number(let number): number
            case .flag(let flag): flag.map { $0 ? 1 : 0 }
            case .time(let ms): ms
            }
        })
    }
}
