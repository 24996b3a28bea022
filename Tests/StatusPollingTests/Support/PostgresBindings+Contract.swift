import EntitlementCore
import PostgresNIO
import StatusPolling

extension PostgresBindings {
    /// A contract value as PostgreSQL holds it: a flag as 0/1 (cast to `smallint` by the statement).
    mutating func append(_ value: ContractValue) {
        switch value {
        case .text(let text): append(text)
        case .number(let number): append(number)
        case .flag(let flag): append(flag.map { $0 ? 1 : 0 })
        case .time(let ms): append(ms)
        }
    }

    /// The contract columns' placeholders from `$first`, each cast to its column's type, in the
    /// order of ``ContractColumn/list``.
    static func contractPlaceholders(from first: Int) -> String {
        ContractColumn.allCases.enumerated().map { "$\(first + $0.offset)::\($0.element.kind.postgresType)" }.joined(separator: ", ")
    }
}
