import GRDB
import StatusPolling

/// The bookkeeping columns of a row, selected after ``SubscriptionRecord/columnList``.
enum BookkeepingRecord {
    static let columnList = "last_attempt_at, last_verified_at, last_apple_status, last_error_reason, last_error, consecutive_failures"

    /// The bookkeeping in `row`'s columns from `start` on, in the order of ``columnList``.
    static func bookkeeping(_ row: Row, from start: Int) -> SubscriptionBookkeeping {
        SubscriptionBookkeeping(
            lastAttemptAt: row[start], lastVerifiedAt: row[start + 1], lastAppleStatus: row[start + 2],
            lastErrorReason: row[start + 3], lastError: row[start + 4], consecutiveFailures: row[start + 5])
    }
}
