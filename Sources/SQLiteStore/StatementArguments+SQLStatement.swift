import GRDB
import StatusPolling

extension StatementArguments {
    /// The values of `statement`, in order.
    init(_ statement: SQLStatement) {
        self.init(statement.values.map { value -> DatabaseValue in
            switch value {
            case .null: .null
            case .integer(let integer): integer.databaseValue
            case .text(let text): text.databaseValue
            }
        })
    }
}
