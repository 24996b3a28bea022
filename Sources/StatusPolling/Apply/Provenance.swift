/// Who brought an answer about a row: a nightly run, a backfill, or an App Store Server
/// Notification. The audit trail records it (`subscription_events.source`, `notification_id`), so
/// a change can be traced to what caused it.
public enum Provenance: Sendable, Equatable {
    /// A nightly run (nil: a write outside any recorded run, as a test's).
    case poll(runID: Int64?)
    /// A backfill run.
    case backfill(runID: Int64)
    /// A notification Apple signed at `signedAtMs`, of `type`, with its `notificationUUID`.
    case notification(notificationUUID: String, type: String, signedAtMs: Int64)

    /// The run that brought it, if a run did.
    public var runID: Int64? {
        switch self {
        case .poll(let runID): return runID
        case .backfill(let runID): return runID
        case .notification: return nil
        }
    }

    /// `subscription_events.source`.
    public var source: String {
        switch self {
        case .poll: return "poll"
        case .backfill: return "backfill"
        case .notification: return "notification"
        }
    }

    /// The notification's `notificationType` (without its subtype); nil for a run.
    public var notificationType: String? {
        guard case .notification(_, let type, _) = self else { return nil }
        return type.split(separator: "/", maxSplits: 1).first.map(String.init)
    }

    /// `subscription_events.notification_id`.
    public var notificationID: String? {
        if case .notification(let uuid, _, _) = self { return uuid }
        return nil
    }
}
