import GRDB
import StatusPolling

/// A `subscriptions` row as GRDB reads it; converted to the domain's `SubscriptionRow` at once.
/// The contract columns are decoded by `SubscriptionState` itself, whose coding keys are the
/// column names, so the list of columns lives in one place.
struct SubscriptionRecord: Decodable, FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "subscriptions"

    var id: Int64
    var userID: String
    var latestReceipt: String
    var receiptUploaded: Bool
    var state: SubscriptionState

    enum CodingKeys: String, CodingKey {
        case id
        case userID = "user_id"
        case latestReceipt = "latest_receipt"
        case receiptUploaded = "receipt_uploaded"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int64.self, forKey: .id)
        userID = try c.decode(String.self, forKey: .userID)
        latestReceipt = try c.decode(String.self, forKey: .latestReceipt)
        receiptUploaded = try c.decode(Bool.self, forKey: .receiptUploaded)
        state = try SubscriptionState(from: decoder)
    }

    var row: SubscriptionRow {
        SubscriptionRow(id: id, userID: userID, latestReceipt: latestReceipt, state: state, receiptUploaded: receiptUploaded)
    }
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
