import GRDB
import StatusPolling

/// A `subscriptions` row as the run reads it, converted to the domain's `SubscriptionRow` at once.
/// Every read selects ``columnList`` and the row is read by position: the run reads one row per
/// receipt, and a `Decodable` record cost more than the query.
struct SubscriptionRecord: FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "subscriptions"
    /// The columns every read selects, in the order ``init(row:)`` reads them.
    static let columnList = "id, user_id, latest_receipt, receipt_uploaded, \(StateColumns.list)"
    static var databaseSelection: [any SQLSelectable] { [SQL(sql: columnList)] }
    /// How many columns ``columnList`` names; what a query adds after them starts here.
    static let columnCount = 4 + StateColumns.count

    var id: Int64
    var userID: String
    var latestReceipt: String
    var receiptUploaded: Bool
    var state: SubscriptionState

    init(row: Row) {
        id = row[0]
        userID = row[1]
        latestReceipt = row[2]
        receiptUploaded = row[3]
        state = StateColumns.state(row, from: 4)
    }

    var row: SubscriptionRow {
        SubscriptionRow(id: id, userID: userID, latestReceipt: latestReceipt, state: state, receiptUploaded: receiptUploaded)
    }
}
