import GRDB
import StatusPolling

/// A `subscriptions` row as GRDB reads it; converted to the domain's `SubscriptionRow` at once.
struct SubscriptionRecord: Codable, FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "subscriptions"

    var id: Int64
    var userID: String
    var latestReceipt: String
    var originalTransactionID: String?
    var productID: String?
    var environment: String?
    var expiresAt: Int64?
    var gracePeriodExpiresAt: Int64?
    var isInBillingRetry: Bool
    var autoRenewStatus: Bool?
    var autoRenewProductID: String?
    var expirationIntent: Int?
    var cancelledAt: Int64?
    var receiptUploaded: Bool

    enum CodingKeys: String, CodingKey {
        case id
        case userID = "user_id"
        case latestReceipt = "latest_receipt"
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case environment
        case expiresAt = "expires_at"
        case gracePeriodExpiresAt = "grace_period_expires_at"
        case isInBillingRetry = "is_in_billing_retry"
        case autoRenewStatus = "auto_renew_status"
        case autoRenewProductID = "auto_renew_product_id"
        case expirationIntent = "expiration_intent"
        case cancelledAt = "cancelled_at"
        case receiptUploaded = "receipt_uploaded"
    }

    /// Only the columns the run needs, so bookkeeping columns can be added without touching this.
    static var databaseSelection: [any SQLSelectable] { CodingKeys.allColumnNames.map { Column($0) } }

    var state: SubscriptionState {
        SubscriptionState(
            originalTransactionID: originalTransactionID, productID: productID, environment: environment,
            expiresAt: expiresAt, gracePeriodExpiresAt: gracePeriodExpiresAt, isInBillingRetry: isInBillingRetry,
            autoRenewStatus: autoRenewStatus, autoRenewProductID: autoRenewProductID,
            expirationIntent: expirationIntent, cancelledAt: cancelledAt)
    }

    var row: SubscriptionRow {
        SubscriptionRow(id: id, userID: userID, latestReceipt: latestReceipt, state: state, receiptUploaded: receiptUploaded)
    }
}

extension SubscriptionRecord.CodingKeys: CaseIterable {
    static var allColumnNames: [String] { allCases.map(\.rawValue) }
}

/// The bookkeeping columns of a row.
struct BookkeepingRecord: Codable, FetchableRecord, Sendable {
    var lastAttemptAt: Int64?
    var lastVerifiedAt: Int64?
    var lastAppleStatus: Int?
    var lastErrorReason: String?
    var lastError: String?
    var consecutiveFailures: Int

    enum CodingKeys: String, CodingKey {
        case lastAttemptAt = "last_attempt_at"
        case lastVerifiedAt = "last_verified_at"
        case lastAppleStatus = "last_apple_status"
        case lastErrorReason = "last_error_reason"
        case lastError = "last_error"
        case consecutiveFailures = "consecutive_failures"
    }

    var bookkeeping: SubscriptionBookkeeping {
        SubscriptionBookkeeping(
            lastAttemptAt: lastAttemptAt, lastVerifiedAt: lastVerifiedAt, lastAppleStatus: lastAppleStatus,
            lastErrorReason: lastErrorReason, lastError: lastError, consecutiveFailures: consecutiveFailures)
    }
}
