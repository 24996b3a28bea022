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

    /// A new event id: `evt_` and 128 random bits as 32 lowercase hex digits. Written by hand: a
    /// UUID's string lowercased with its dashes replaced cost 4 % of a poll's CPU.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var bytes = Array("evt_".utf8)
        bytes.reserveCapacity(36)
        for _ in 0..<2 {
            let word: UInt64 = generator.next()
            for shift in stride(from: 60, through: 0, by: -4) { bytes.append(digits[Int((word >> UInt64(shift)) & 0xf)]) }
        }
        return String(decoding: bytes, as: UTF8.self)
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

    /// `ms` as ISO 8601 in UTC with milliseconds (`2026-11-27T18:12:25.123Z`), the form of
    /// Foundation's `ISO8601FormatStyle(includingFractionalSeconds: true)` without its cost per
    /// event, and exact: Foundation, from a `Double` of seconds, writes 999 ms as ".998". The civil
    /// date from days since 1970 is Howard Hinnant's `civil_from_days`.
    static func iso8601(_ ms: Int64) -> String {
        let (days, msOfDay) = ms.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, dayMs) = msOfDay < 0 ? (days - 1, msOfDay + 86_400_000) : (days, msOfDay)
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func padded(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(dayOfMonth, 2))T\(padded(dayMs / 3_600_000, 2)):"
            + "\(padded(dayMs / 60_000 % 60, 2)):\(padded(dayMs / 1_000 % 60, 2)).\(padded(dayMs % 1_000, 3))Z"
    }
}
