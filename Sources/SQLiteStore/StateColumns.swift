import Foundation
import GRDB
import StatusPolling

/// The contract columns in a fixed order, read by position: the writer reads one row per result
/// and should not pay for a decoder.
enum StateColumns {
    static let list = """
        original_transaction_id, product_id, environment, expires_at, grace_period_expires_at, \
        is_in_billing_retry, auto_renew_status, auto_renew_product_id, expiration_intent, cancelled_at, \
        transaction_id, purchased_at, in_app_ownership_type, \
        billing_plan_type, commitment_period, commitment_periods, commitment_expires_at, renewal_billing_plan_type
        """

    /// The report's columns (``TrailState``) out of a JSON object of the contract columns, in the
    /// order ``trailState(_:from:)`` reads them: the identifiers only as "is there one".
    static func trailFromJSON(_ column: String) -> String {
        let columns = ["expires_at", "grace_period_expires_at", "is_in_billing_retry", "auto_renew_status", "expiration_intent", "cancelled_at"]
        return "json_extract(\(column), '$.original_transaction_id') IS NOT NULL, "
            + columns.map { "json_extract(\(column), '$.\($0)')" }.joined(separator: ", ")
    }

    /// The report's columns in `row`'s columns `start…start + 6`, in the order of `trailFromJSON`.
    static func trailState(_ row: Row, from start: Int) -> TrailState {
        TrailState(
            isVerified: row[start], expiresAt: row[start + 1], gracePeriodExpiresAt: row[start + 2], isInBillingRetry: row[start + 3],
            autoRenewStatus: row[start + 4], expirationIntent: row[start + 5], cancelledAt: row[start + 6])
    }

    /// How many columns `list` names.
    static let count = 18

    /// The state in `row`'s columns `start…start + 17`, in the order of `list`.
    static func state(_ row: Row, from start: Int) -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: row[start], productID: row[start + 1], environment: row[start + 2],
            expiresAt: row[start + 3], gracePeriodExpiresAt: row[start + 4], isInBillingRetry: row[start + 5],
            autoRenewStatus: row[start + 6], autoRenewProductID: row[start + 7], expirationIntent: row[start + 8],
            cancelledAt: row[start + 9], transactionID: row[start + 10], purchasedAt: row[start + 11], ownershipType: row[start + 12],
            billingPlanType: row[start + 13], commitmentPeriod: row[start + 14], commitmentPeriods: row[start + 15],
            commitmentExpiresAt: row[start + 16], renewalBillingPlanType: row[start + 17])
    }
}
