/// Apple's `status` of an auto-renewable subscription (a V2 notification's `data.status`, Get All
/// Subscription Statuses' `lastTransactions.status`), and the same derived from a row's columns,
/// so Apple's verdict can check what the row comes to.
public enum AppleSubscriptionStatus: Int, Sendable, Equatable, CaseIterable {
    case active = 1
    case expired = 2
    case billingRetry = 3
    case gracePeriod = 4
    case revoked = 5

    /// What `state` says at `atMs`, in Apple's terms: revoked, then active while the expiry is
    /// ahead, then a running grace period, then billing retry, else expired.
    public init(of state: SubscriptionState, at atMs: Int64) {
        if state.cancelledAt != nil {
            self = .revoked
        } else if let expires = state.expiresAt, expires > atMs {
            self = .active
        } else if let grace = state.gracePeriodExpiresAt, grace > atMs {
            self = .gracePeriod
        } else if state.isInBillingRetry {
            self = .billingRetry
        } else {
            self = .expired
        }
    }
}
