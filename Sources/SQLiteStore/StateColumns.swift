import Foundation
import GRDB
import StatusPolling

/// The contract columns in a fixed order, read by position: the writer reads one row per result
/// and should not pay for a decoder.
enum StateColumns {
    static let list = """
        original_transaction_id, product_id, environment, expires_at, grace_period_expires_at, \
        is_in_billing_retry, auto_renew_status, auto_renew_product_id, expiration_intent, cancelled_at
        """

    /// `list`'s columns read out of a JSON object of them (the trail's `old_values`, `new_values`)
    /// by SQLite's own JSON functions: far cheaper than a decoder for the report's millions.
    static func fromJSON(_ column: String) -> String {
        list.split(separator: ",").map { name in
            let key = name.trimmingCharacters(in: .whitespaces)
            return "json_extract(\(column), '$.\(key)')"
        }.joined(separator: ", ")
    }

    /// How many columns `list` names.
    static let count = 10

    /// The state in `row`'s columns `start…start + 9`, in the order of `list`.
    static func state(_ row: Row, from start: Int) -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: row[start], productID: row[start + 1], environment: row[start + 2],
            expiresAt: row[start + 3], gracePeriodExpiresAt: row[start + 4], isInBillingRetry: row[start + 5],
            autoRenewStatus: row[start + 6], autoRenewProductID: row[start + 7], expirationIntent: row[start + 8],
            cancelledAt: row[start + 9])
    }
}
