/// The seam a store implements once so that the library's workflows run on it: run the library's
/// shared statements (``SQLStatement``, rendered in the store's ``dialect``), hand back their rows,
/// and run a workflow's statements in one transaction. What a role does with them — which
/// statements, in what order, what the rows mean — is library code over this seam
/// (`Store/Workflows/`), written once for both stores; a store adds only what its dialect truly
/// does differently. Errors come out as the store maps them: ``StoreError`` for the database as a
/// whole.
///
/// The plan that moves the remaining roles onto it is `docs/design/STORE-SEAM.md`.
public protocol SQLStore: Sendable {
    /// One connection inside a transaction.
    associatedtype Session: SQLSession

    /// The placeholders and forms the store's SQL takes.
    var dialect: SQLDialect { get }

    /// This process's part in the store's work when several workers share it (leases, work
    /// targets); nil when a run has the database to itself.
    var workShare: WorkShare? { get }

    /// Whether the writers add each contract change's event to the outbox (`outbound_events`):
    /// only when something reads it (an endpoint configured, or `event_outbox`), since the outbox
    /// is a third of what a changed row writes.
    var writesOutbox: Bool { get }

    /// Runs one statement that writes, as its own transaction (no BEGIN and COMMIT round trips
    /// where the database does not need them).
    func execute(_ statement: SQLStatement) async throws

    /// The rows of `statement`, read outside a transaction, each by `read`.
    func rows<T: Sendable>(_ statement: SQLStatement, _ read: @Sendable (inout Session.Columns) throws -> T) async throws -> [T]

    /// `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (Session) async throws -> T) async throws -> T
}

/// A connection inside a transaction (``SQLStore/transaction(_:)``): a workflow's statements run
/// on it in order, each seeing the ones before.
public protocol SQLSession: Sendable {
    /// The store's own row, read left to right.
    associatedtype Columns: ColumnReader

    /// Runs `statement`, its rows unread.
    func execute(_ statement: SQLStatement) async throws

    /// The rows of `statement`, each read by `read`.
    func rows<T>(_ statement: SQLStatement, _ read: (inout Columns) throws -> T) async throws -> [T]
}

extension SQLStore {
    public var workShare: WorkShare? { nil }
    public var writesOutbox: Bool { true }

    /// `statements` in one transaction, in order; the rows of each (none for a statement without
    /// `RETURNING`), each read by `read`.
    public func commit<T: Sendable>(_ statements: [SQLStatement], reading read: @escaping @Sendable (inout Session.Columns) throws -> T) async throws -> [[T]] {
        try await transaction { session in
            var rows: [[T]] = []
            for statement in statements { rows.append(try await session.rows(statement, read)) }
            return rows
        }
    }

    /// How many rows `statement` (an UPDATE or a DELETE) changed, in one transaction.
    public func changes(_ statement: SQLStatement) async throws -> Int {
        switch dialect {
        case .sqlite:
            // SQLite allows no write inside a WITH: the rows it returns, counted.
            return try await commit(["\(statement) RETURNING 1"], rowsOfLast: { _ in () }).count
        case .postgres:
            return try await commit(["WITH changed AS (\(statement) RETURNING 1) SELECT count(*) FROM changed"], rowsOfLast: { row -> Int in try row.column() }).first ?? 0
        }
    }

    /// `statements` in one transaction, their rows unread.
    public func commit(_ statements: SQLStatement...) async throws {
        try await transaction { session in
            for statement in statements { try await session.execute(statement) }
        }
    }

    /// `statements` in one transaction, in order; the rows of the last, each read by `read`.
    func commit<T: Sendable>(_ statements: [SQLStatement], rowsOfLast read: @escaping @Sendable (inout Session.Columns) throws -> T) async throws -> [T] {
        try await commit(statements, reading: read).last ?? []
    }

    /// The first row of `statement`, read by `read`; nil when there is none.
    func firstRow<T: Sendable>(_ statement: SQLStatement, _ read: @Sendable (inout Session.Columns) throws -> T) async throws -> T? {
        try await rows(statement, read).first
    }

    /// The records of `statement`, whose one row is one text of rows packed by
    /// ``PackedRows/aggregate(_:)``, each read by `read`.
    @inlinable
    public func packedRows<T>(_ statement: SQLStatement, _ read: (inout PackedRows) throws -> T) async throws -> [T] {
        try PackedRows.rows(try await rows(statement) { row -> String? in try row.column() }.first ?? nil, read)
    }
}

extension SQLSession {
    /// The first row of `statement`, read by `read`; nil when there is none.
    func firstRow<T>(_ statement: SQLStatement, _ read: (inout Columns) throws -> T) async throws -> T? {
        try await rows(statement, read).first
    }
}
