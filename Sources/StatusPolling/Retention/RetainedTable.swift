/// A table that retention prunes, with what makes one of its rows old enough to go and what keeps
/// it whatever its age. Each is deleted oldest first by its key, a bounded batch at a time.
public enum RetainedTable: String, Sendable, CaseIterable {
    /// The audit trail, by `at` (its index).
    case subscriptionEvents = "subscription_events"
    /// Renewal-date extensions Apple finished with (completed or refused); one still in progress
    /// is kept. With the audit trail's setting: they are operators' changes to rows.
    case renewalExtensions = "renewal_extensions"
    /// Notifications received, by `received_at` (its index); kept at least a week, so Apple's
    /// retries (up to 3 days) are still known as duplicates.
    case appStoreNotifications = "app_store_notifications"
    /// Refund requests answered (or expired); a pending one is kept. With the notifications' setting.
    case consumptionRequests = "consumption_requests"
    /// Finished runs (and a backfill's targets with them); the newest of each mode, a running or
    /// resumable one, and one whose audit rows are still kept stay.
    case pollRuns = "poll_runs"

    /// Which of the policy's durations applies.
    var setting: RetentionPolicy.Setting {
        switch self {
        case .subscriptionEvents, .renewalExtensions: .audit
        case .appStoreNotifications, .consumptionRequests: .notifications
        case .pollRuns: .runs
        }
    }
}
