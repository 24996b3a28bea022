import EntitlementCore

/// The `subscriptions` row as every reader selects it and reads it: its column lists and their
/// one reader, beside the reads and writes of the web service's side (enrol, upload, look up).
/// The only place a row's columns are listed in order; the stores read nothing by position.
public enum SubscriptionRowSQL {
    /// A row as the run reads it, in the order ``row(_:)`` reads it.
    public static let columns = "id, user_id, latest_receipt, receipt_uploaded, \(ContractColumn.list)"

    /// The bookkeeping, in the order ``bookkeeping(_:)`` reads it.
    public static let bookkeepingColumns =
        "last_attempt_at, last_verified_at, last_apple_status, last_error_reason, last_error, consecutive_failures"

    /// The rows with these ids, in `id` order (at most a page of them).
    public static func rows(ids: [Int64]) -> SQLStatement {
        "SELECT \(unescaped: columns) FROM subscriptions WHERE id IN (\(list: ids)) ORDER BY id"
    }

    /// The rows of `userID`, in `id` order, with their bookkeeping when asked.
    public static func rows(userID: String, bookkeeping: Bool = false) -> SQLStatement {
        "SELECT \(unescaped: columns)\(unescaped: bookkeeping ? ", " + bookkeepingColumns : "") FROM subscriptions WHERE user_id = \(userID) ORDER BY id"
    }

    /// A page of rows after `cursor`, in `id` order, with their bookkeeping.
    public static func rowsWithBookkeeping(after cursor: Int64, limit: Int) -> SQLStatement {
        "SELECT \(unescaped: columns), \(unescaped: bookkeepingColumns) FROM subscriptions WHERE id > \(cursor) ORDER BY id LIMIT \(limit)"
    }

    /// The id of the row that owns a chain.
    public static func owner(of originalTransactionID: String) -> SQLStatement {
        "SELECT id FROM subscriptions WHERE original_transaction_id = \(originalTransactionID)"
    }

    /// Subscribers as the web service inserts them, nothing verified; their ids, one row each. Ids
    /// come from the table's sequence in the order of the values, so sorted they follow the input.
    public static func enroll(_ subscribers: ArraySlice<(userID: String, receipt: String)>) -> SQLStatement {
        let rows = subscribers.map { subscriber -> SQLStatement in "(\(subscriber.userID), \(subscriber.receipt))" }
        return "INSERT INTO subscriptions (user_id, latest_receipt) VALUES \(joined: rows) RETURNING id"
    }

    /// How many subscribers one ``enroll(_:)`` inserts: two values each, well under SQLite's limit
    /// of bound values.
    public static let enrollChunk = 500

    /// Stores a receipt the app uploaded; the next run verifies it.
    public static func upload(_ receipt: String, subscriptionID: Int64) -> SQLStatement {
        "UPDATE subscriptions SET latest_receipt = \(receipt) WHERE id = \(subscriptionID)"
    }

    /// A row of ``columns``. Inlinable: the run reads one per receipt.
    @inlinable
    public static func row(_ row: inout some ColumnReader) throws -> SubscriptionRow {
        let id: Int64 = try row.column(), userID: String = try row.column(), receipt: String = try row.column()
        let uploaded: Bool = try row.column()
        return SubscriptionRow(id: id, userID: userID, latestReceipt: receipt, state: try state(&row), receiptUploaded: uploaded)
    }

    /// The contract columns in the table's order, each read as its kind (a flag as 0/1).
    @inlinable
    public static func state(_ row: inout some ColumnReader) throws -> SubscriptionState {
        try SubscriptionState { column in
            switch column.kind {
            case .text: return .text(try row.text())
            case .number: return .number(try row.integer().map { Int($0) })
            case .flag: return .flag(try row.integer().map { $0 != 0 })
            case .time: return .time(try row.integer())
            }
        }
    }

    /// A row of ``bookkeepingColumns``.
    public static func bookkeeping(_ row: inout some ColumnReader) throws -> SubscriptionBookkeeping {
        SubscriptionBookkeeping(
            lastAttemptAt: try row.column(), lastVerifiedAt: try row.column(), lastAppleStatus: try row.column(),
            lastErrorReason: try row.column(), lastError: try row.column(), consecutiveFailures: try row.column())
    }
}
