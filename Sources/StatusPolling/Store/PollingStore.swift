/// An open database, as ``PollingDatabase/open()`` hands it out: one role for each of its users,
/// each of which sees only its own — the run (``RunStore``), the notification receiver
/// (``NotificationInbox``), the report (``SubscriptionTrail``), and the web service's side and
/// the operator's commands (``SubscriberDirectory``, ``RenewalExtensionLedger``), the event feed's deliverer (``EventOutbox``), the consumption answers (``ConsumptionLedger``), retention (``TrailRetention``) — and the close that whoever opened it calls.
public protocol PollingStore: RunStore, NotificationInbox, SubscriptionTrail, SubscriberDirectory, RenewalExtensionLedger, EventOutbox, ConsumptionLedger,
    TrailRetention
{
    /// Releases its connections; further calls fail.
    func close() async throws
}
