import GRDB
import StatusPolling

extension StatementArguments {
    /// The values of `statement`, in order.
    init(_ statement: SQLStatement) {
        // As existentials: GRDB's initialiser from a sequence of `DatabaseValue`s maps them through
        // a key path, unspecialised (2 % of a poll's CPU for the outbox's insert alone).
        self.init(statement.values.map { value -> (any DatabaseValueConvertible)? in
            switch value {
            case .null: nil
            case .integer(let integer): integer
            case .text(let text): text
            }
        })
    }
}
