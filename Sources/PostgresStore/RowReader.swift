import PostgresNIO
import StatusPolling

/// Reads a row's cells in order, so the row types are read in one place, in the order of their
/// column lists (``subscriptionColumns``, ``stateColumns``, ``bookkeepingColumns``).
public struct RowReader {
    private let cells: PostgresRandomAccessRow
    private var index = 0

    init(_ row: PostgresRow) { cells = row.makeRandomAccess() }

    mutating func next<T: PostgresDecodable>(_ type: T.Type = T.self) throws -> T {
        defer { index += 1 }
        return try cells[index].decode(T.self)
    }

    /// The contract columns, in the table's order (``ContractColumn``).
    static let stateColumns = ContractColumn.list

    /// A row as the run reads it, in the order ``subscription()`` reads it.
    static let subscriptionColumns = "id, user_id, latest_receipt, receipt_uploaded, \(stateColumns)"

    /// The bookkeeping, in the order ``bookkeeping()`` reads it.
    static let bookkeepingColumns = "last_attempt_at, last_verified_at, last_apple_status, last_error_reason, last_error, consecutive_failures"

    /// The contract columns in the table's order, each read as its kind (a flag is a 0/1 `smallint`).
    mutating func state() throws -> SubscriptionState {
        try SubscriptionState { column in
            switch column.kind {
            case .text: return .text(try next())
            case .number: return .number(try next())
            case .flag: return .flag(try next(Int?.self).map { $0 == 1 })
            case .time: return .time(try next())
            }
        }
    }

    /// The report's columns, in the order of ``PostgresSubscriptionStore/trailColumns(_:)``.
    mutating func trailState() throws -> TrailState {
        TrailState(
            isVerified: try next(), expiresAt: try next(), gracePeriodExpiresAt: try next(), isInBillingRetry: try next(),
            autoRenewStatus: try next(), expirationIntent: try next(), cancelledAt: try next())
    }

    mutating func subscription() throws -> SubscriptionRow {
        let id: Int64 = try next()
        let userID: String = try next()
        let receipt: String = try next()
        let uploaded = try next(Int.self) == 1
        return SubscriptionRow(id: id, userID: userID, latestReceipt: receipt, state: try state(), receiptUploaded: uploaded)
    }

    mutating func bookkeeping() throws -> SubscriptionBookkeeping {
        SubscriptionBookkeeping(
            lastAttemptAt: try next(), lastVerifiedAt: try next(), lastAppleStatus: try next(), lastErrorReason: try next(),
            lastError: try next(), consecutiveFailures: try next())
    }
}
