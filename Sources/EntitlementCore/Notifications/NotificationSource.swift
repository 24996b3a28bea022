/// How a notification reached the poller: Apple's push to the receiver, or a catch-up from Apple's
/// Notification History. Both go through the same ingest; a duplicate changes nothing either way.
public enum NotificationSource: String, Sendable, CaseIterable {
    case push
    case history
}
