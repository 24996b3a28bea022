/// The seam a store implements once so that the library's workflows run on it: run the library's
/// shared statements (``SQLStatement``, rendered in the store's ``dialect``) and hand back their
/// rows. What a role does with them — which statements, in what order, what the rows mean — is
/// library code over this seam (`Store/Workflows/`), written once for both stores; a store adds only
/// what its dialect truly does differently. Errors come out as the store maps them: ``StoreError``
/// for the database as a whole.
///
/// The plan that moves the remaining roles onto it is `docs/design/STORE-SEAM.md`.
public protocol SQLStore: Sendable {
    /// The store's own row, read left to right.
    associatedtype Columns: ColumnReader

    /// The placeholders and forms the store's SQL takes.
    var dialect: SQLDialect { get }

    /// The rows of `statement`, read outside a transaction, each by `read`.
    func rows<T: Sendable>(_ statement: SQLStatement, _ read: @Sendable (inout Columns) throws -> T) async throws -> [T]

    /// `statements` in one transaction, in order; the rows of each (none for a statement without
    /// `RETURNING`), each read by `read`.
    func commit<T: Sendable>(_ statements: [SQLStatement], reading read: @Sendable (inout Columns) throws -> T) async throws -> [[T]]
}

extension SQLStore {
    /// `statements` in one transaction, their rows unread.
    public func commit(_ statements: SQLStatement...) async throws {
        _ = try await commit(statements) { _ in () }
    }

    /// `statements` in one transaction, in order; the rows of the last, each read by `read`.
    func commit<T: Sendable>(_ statements: [SQLStatement], rowsOfLast read: @Sendable (inout Columns) throws -> T) async throws -> [T] {
        try await commit(statements, reading: read).last ?? []
    }

    /// The first row of `statement`, read by `read`; nil when there is none.
    func firstRow<T: Sendable>(_ statement: SQLStatement, _ read: @Sendable (inout Columns) throws -> T) async throws -> T? {
        try await rows(statement, read).first
    }
}
