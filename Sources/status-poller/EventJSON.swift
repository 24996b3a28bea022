import StatusPolling

/// An audit event as `history --format json` prints it.
struct EventJSON: Encodable {
    var id: Int64
    var subscription_id: Int64
    var user_id: String
    var run_id: Int64?
    var at: String
    var reason: String
    var apple_status: Int?
    /// Which backend answered `apple_status`: verifyReceipt or serverAPI.
    var status_backend: String?
    var entitlement_before: String
    var entitlement_after: String
    var old: SubscriptionState
    var new: SubscriptionState
    /// Who brought the answer: poll, backfill or notification (null before schema v7).
    var source: String?
    var notification_id: String?
    /// The notification's type and subtype, e.g. `DID_RENEW/BILLING_RECOVERY`, when one brought it.
    var notification_type: String?

    init(_ e: SubscriptionEvent, notificationType: String? = nil) {
        id = e.id
        subscription_id = e.subscriptionID
        user_id = e.userID
        run_id = e.runID
        at = Display.time(e.atMs)
        reason = e.reason
        apple_status = e.appleStatus
        status_backend = e.statusBackend
        entitlement_before = e.entitlementBefore
        entitlement_after = e.entitlementAfter
        old = e.old
        new = e.new
        source = e.source
        notification_id = e.notificationID
        notification_type = notificationType
    }
}
