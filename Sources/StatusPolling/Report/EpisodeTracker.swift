/// Opens and closes ``BillingEpisode``s from the trail, one subscription's events in order. Holds
/// the open episodes only; closed ones go to the report as they close.
struct EpisodeTracker {
    private var open: [Int64: BillingEpisode] = [:]

    /// The episode `event` closes, if any; opens one when the event enters billing trouble.
    mutating func take(_ event: TrailEvent) -> BillingEpisode? {
        let old = event.old, new = event.new
        if var episode = open[event.subscriptionID] {
            let outcome: BillingEpisode.Outcome?
            if new.cancelledAt != nil, old.cancelledAt == nil {
                outcome = .refunded
            } else if let expires = new.expiresAt, expires > episode.startMs {
                outcome = .recovered
            } else if !new.isInBillingRetry, new.gracePeriodExpiresAt == nil {
                outcome = .lost
            } else if old.autoRenewStatus != false, new.autoRenewStatus == false {
                outcome = .cancelled
            } else {
                outcome = nil
            }
            guard let outcome else {
                if let grace = new.gracePeriodExpiresAt { open[event.subscriptionID]?.graceEndsMs = grace }
                return nil
            }
            episode.outcome = outcome
            episode.closedAtMs = event.atMs
            open[event.subscriptionID] = nil
            return episode
        }
        if new.isInBillingRetry || new.gracePeriodExpiresAt != nil, new.cancelledAt == nil {
            open[event.subscriptionID] = BillingEpisode(
                subscriptionID: event.subscriptionID, startMs: new.expiresAt ?? event.atMs, seenAtMs: event.atMs, graceEndsMs: new.gracePeriodExpiresAt)
        }
        return nil
    }

    /// Whether `event` opened an episode (the movement's "entered billing trouble").
    func isOpen(_ subscriptionID: Int64) -> Bool { open[subscriptionID] != nil }

    /// The episodes still open, censored at the report's end.
    var stillOpen: [BillingEpisode] { open.values.sorted { $0.subscriptionID < $1.subscriptionID } }
}
