import EntitlementCore
import Foundation
import Synchronization

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

    /// A new event id: `evt_`, the wall clock's milliseconds in 12 hex digits, then 80 bits in 20
    /// — 32 lowercase hex digits, time first as UUIDv7 orders its bits, so the outbox's unique
    /// index on it grows at its end (128 random bits put every insert on a random page of that
    /// index). The 80 bits: 16 random ones drawn once per process, then a process-wide counter
    /// from a random start through SplitMix64's finaliser, a bijection: no two ids of a process
    /// repeat, and no system call per id (two `getrandom`s per id were 1 % of a poll's CPU).
    public static func newID(wallClockMs: Int64 = Int64(Date().timeIntervalSince1970 * 1_000)) -> String {
        let count = idCounter.add(1, ordering: .relaxed).newValue
        var mixed = idSeed.start &+ count &* 0x9e37_79b9_7f4a_7c15
        mixed = (mixed ^ (mixed >> 30)) &* 0xbf58_476d_1ce4_e5b9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
        mixed ^= mixed >> 31
        var bytes = Array("evt_".utf8)
        bytes.reserveCapacity(36)
        func append(_ value: UInt64, digits count: Int) {
            for shift in stride(from: 4 * (count - 1), through: 0, by: -4) { bytes.append(hexDigits[Int((value >> UInt64(shift)) & 0xf)]) }
        }
        append(UInt64(truncatingIfNeeded: wallClockMs), digits: 12)
        append(UInt64(idSeed.process), digits: 4)
        append(mixed, digits: 16)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let idSeed = (process: UInt16.random(in: .min ... .max), start: UInt64.random(in: .min ... .max))
    private static let idCounter = Atomic<UInt64>(0)

    /// The JSON body every delivery sends (docs/EVENTS.md has its schema): Standard Webhooks'
    /// recommended envelope, `type`, `timestamp` and `data`, with the event's id beside them.
    /// Appended into one string (an interpolation of twenty quoted parts was 1.5 % of a poll).
    public var body: String {
        var out = ""
        out.reserveCapacity(704)
        func member(_ key: String, _ text: String?) { out.append(key); JSONText.append(text, to: &out) }
        func member(_ key: String, _ number: Int64?) { out.append(key); out.append(number?.description ?? "null") }
        member(#"{"id":"#, eventID)
        member(#","type":"#, kind.rawValue)
        member(#","timestamp":"#, RFC3339Timestamp.text(atMs))
        member(#","data":{"user_id":"#, userID)
        member(#","subscription_id":"#, subscriptionID)
        member(#","original_transaction_id":"#, originalTransactionID)
        member(#","product_id":"#, productID)
        member(#","transaction_id":"#, transactionID)
        member(#","environment":"#, environment)
        out.append(#","entitlement_before":"#)
        before.append(to: &out)
        out.append(#","entitlement_after":"#)
        after.append(to: &out)
        member(#","expiration_intent":"#, expirationIntent.map(Int64.init))
        member(#","audit_event_id":"#, auditEventID)
        member(#","source":"#, source)
        member(#","notification_id":"#, notificationID)
        member(#","apple_at_ms":"#, appleAtMs)
        member(#","at_ms":"#, atMs)
        out.append("}}")
        return out
    }
}
