import Foundation

/// One row of the outbox (`outbound_events`): a contract change told to the web service, written
/// in the transaction of the change and of its audit row, delivered later (``EventDeliverer``).
/// Its body is fixed when it is written, so a redelivery sends the same bytes under the same id.
public struct OutboundEvent: Sendable, Equatable {
    /// `evt_` and 32 hex digits: the `webhook-id` of every delivery, the consumer's idempotency key.
    public var eventID: String
    public var kind: EventKind
    public var userID: String
    public var subscriptionID: Int64
    public var originalTransactionID: String?
    public var productID: String?
    /// The transaction the change concerns: an earlier period's for a refund of it, else the row's.
    public var transactionID: String?
    public var environment: String?
    public var before: EntitlementSnapshot
    public var after: EntitlementSnapshot
    /// Apple's `expiration_intent` after the change (1…5), for `expired` above all.
    public var expirationIntent: Int?
    /// The audit row (`subscription_events.id`) of the change.
    public var auditEventID: Int64
    /// Who brought the change: poll, backfill or notification.
    public var source: String
    public var notificationID: String?
    /// When Apple's data was true (a notification's `signedDate`, or when Apple was asked), ms.
    public var appleAtMs: Int64?
    /// When we wrote the change (the run's or the receiver's clock), ms.
    public var atMs: Int64

    /// The event of one audit row of `plan`, or nil when the row changes no contract column
    /// (``EventKind``). `eventID` defaults to a new random one.
    public init?(
        _ event: RowUpdatePlan.Event, plan: RowUpdatePlan, subscriptionID: Int64, userID: String, auditEventID: Int64,
        eventID: String = OutboundEvent.newID()
    ) {
        guard let kind = EventKind(reason: event.reason, before: event.old, after: event.new) else { return nil }
        self.eventID = eventID
        self.kind = kind
        self.userID = userID
        self.subscriptionID = subscriptionID
        originalTransactionID = event.new.originalTransactionID ?? event.old.originalTransactionID
        productID = event.new.productID
        transactionID = event.transactionID ?? event.new.transactionID
        environment = event.new.environment
        before = EntitlementSnapshot(event.old, at: plan.atMs)
        after = EntitlementSnapshot(event.new, at: plan.atMs)
        expirationIntent = event.new.expirationIntent
        self.auditEventID = auditEventID
        source = plan.provenance.source
        notificationID = plan.provenance.notificationID
        appleAtMs = plan.appleStateAtMs
        atMs = plan.atMs
    }

    /// A new event id: `evt_` and a random UUID's 32 hex digits.
    public static func newID() -> String {
        "evt_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// The JSON body every delivery sends (docs/EVENTS.md has its schema): Standard Webhooks'
    /// recommended envelope, `type`, `timestamp` and `data`, with the event's id beside them.
    public var body: String {
        """
        {"id":\(JSONText.quoted(eventID)),"type":\(JSONText.quoted(kind.rawValue)),"timestamp":\(JSONText.quoted(Self.iso8601(atMs))),\
        "data":{"user_id":\(JSONText.quoted(userID)),"subscription_id":\(subscriptionID),\
        "original_transaction_id":\(JSONText.quoted(originalTransactionID)),"product_id":\(JSONText.quoted(productID)),\
        "transaction_id":\(JSONText.quoted(transactionID)),"environment":\(JSONText.quoted(environment)),\
        "entitlement_before":\(before.json),"entitlement_after":\(after.json),"expiration_intent":\(JSONText.number(expirationIntent)),\
        "audit_event_id":\(auditEventID),"source":\(JSONText.quoted(source)),"notification_id":\(JSONText.quoted(notificationID)),\
        "apple_at_ms":\(JSONText.number(appleAtMs)),"at_ms":\(atMs)}}
        """
    }

    static func iso8601(_ ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
