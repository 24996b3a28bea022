/// An open database: everything a job and the operator commands do with it.
public protocol PollingStore: SubscriptionStore, RunJournal, SubscriberDirectory, NotificationInbox, SubscriptionTrail {
    /// Releases its connections; further calls fail.
    func close() async throws
}
