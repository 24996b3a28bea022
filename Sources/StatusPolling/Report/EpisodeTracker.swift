/// Opens and closes a subscription's ``BillingEpisode`` from its trail, one event at a time. The
/// open episode lives with the rest of what the report keeps of the row.
enum EpisodeTracker {
    /// The episode `event` closes, if any (taken out of `open`); opens one in `open` when the event
    /// enters billing trouble. `old`: the row's columns before the event (an open episode means the
    /// row is known).
    static func take(_ event: TrailEvent, old: TrailState, open: inout BillingEpisode?) -> BillingEpisode? {
        let new = event.new
        if var episode = open {
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
                if let grace = new.gracePeriodExpiresAt { open?.graceEndsMs = grace }
                return nil
            }
            episode.outcome = outcome
            episode.closedAtMs = event.atMs
            open = nil
            return episode
        }
        if new.isInBillingRetry || new.gracePeriodExpiresAt != nil, new.cancelledAt == nil {
            open = BillingEpisode(
                subscriptionID: event.subscriptionID, startMs: new.expiresAt ?? event.atMs, seenAtMs: event.atMs, graceEndsMs: new.gracePeriodExpiresAt)
        }
        return nil
    }
}
