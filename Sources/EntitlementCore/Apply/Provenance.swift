/// Who brought an answer about a row: a nightly run, a backfill, an App Store Server
/// Notification, or an operator's renewal-date extension. The audit trail records it (`subscription_events.source`, `notification_id`), so
/// a change can be traced to what caused it.
public enum Provenance: Sendable, Equatable {
    /// A nightly run (nil: a write outside any recorded run, as a test's).
    case poll(runID: Int64?)
    /// A backfill run.
    case backfill(runID: Int64)
    /// A notification Apple signed at `signedAtMs`, of `type`, with its `notificationUUID`.
    case notification(notificationUUID: String, type: String, signedAtMs: Int64)
    /// `extend`: Apple's signed status asked right after it extended the renewal date.
    case extended(requestIdentifier: String)

    /// The run that brought it, if a run did.
    public var runID: Int64? {
        switch self {
        case .poll(let runID): return runID
        case .backfill(let runID): return runID
        case .notification, .extended: return nil
        }
    }

    /// `subscription_events.source`.
    public var source: String {
        switch self {
        case .poll: return "poll"
        case .backfill: return "backfill"
        case .notification: return "notification"
        case .extended: return "extended"
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

    /// For a notification, when Apple's data in it was true (its `signedDate`; a V1 body's
    /// arrival): kept on the change's audit row, so that the report's notification lag needs no
    /// look-up of the notification.
    public var notifiedAtMs: Int64? {
        if case .notification(_, _, let signedAtMs) = self { return signedAtMs }
        return nil
    }
}
