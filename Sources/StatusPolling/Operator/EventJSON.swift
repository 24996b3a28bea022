import EntitlementCore

/// An audit event as `history --format json` prints it.
package struct EventJSON: Encodable {
    package var id: Int64
    package var subscription_id: Int64
    package var user_id: String
    package var run_id: Int64?
    package var at: String
    package var reason: String
    package var apple_status: Int?
    /// Which backend answered `apple_status`: verifyReceipt or serverAPI.
    package var status_backend: String?
    package var entitlement_before: String
    package var entitlement_after: String
    package var old: SubscriptionState
    package var new: SubscriptionState
    /// Who brought the answer: poll, backfill or notification (null before schema v7).
    package var source: String?
    package var notification_id: String?
    /// The notification's type and subtype, e.g. `DID_RENEW/BILLING_RECOVERY`, when one brought it.
    package var notification_type: String?

    package init(_ e: SubscriptionEvent, notificationType: String? = nil) {
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
