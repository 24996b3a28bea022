/// What a received notification did, as `app_store_notifications.outcome` holds it and the
/// receiver's metrics count it. Every outcome is answered 200: Apple would only send it again.
public enum NotificationOutcome: String, Sendable, CaseIterable, Codable {
    /// It changed the row's contract columns.
    case applied
    /// The row already held what it says (its bookkeeping says it was confirmed).
    case unchanged
    /// Signed before the Apple data the row holds: no column changed, a `stale` audit row says so.
    case stale
    /// Received before (same `notificationUUID`, or the same V1 body): nothing applied twice.
    case duplicate
    /// No row owns its chain (nor its `appAccountToken`): kept, so a row enrolled later with that
    /// token, or a later delivery, can still take it.
    case unmatched
    /// A sandbox notification for a production row, or the reverse: no column changed.
    case otherEnvironment = "other_environment"
    /// Its chain belongs to another row than the one its `appAccountToken` names: nothing granted.
    case conflict
    /// About no subscription the rows keep (a test, a summary, a consent change, a one-time
    /// purchase, another app's data): stored, nothing else.
    case ignored
}
