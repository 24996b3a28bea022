/// What a successful verification changed, in subscription-lifecycle words. Used for the run
/// report and the logs; computed from the old and new state only.
public enum SubscriptionTransition: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable, Comparable {
    /// The row was verified for the first time.
    case firstVerified = "first_verified"
    /// A new transaction extended the expiry.
    case renewed
    /// A billing grace period started.
    case enteredGrace = "entered_grace"
    /// Apple started retrying a failed charge, without a grace period.
    case enteredBillingRetry = "entered_billing_retry"
    /// A charge that was being retried went through.
    case recovered
    /// Access ended: the expiry (and any grace period) passed without a renewal.
    case expired
    /// The user turned auto-renew off.
    case autoRenewOff = "auto_renew_off"
    /// Apple refunded or revoked the effective transaction.
    case refunded
    /// Apple reversed the refund of the effective transaction (`REFUND_REVERSED`): access is back.
    case refundReversed = "refund_reversed"
    /// The effective product changed within the subscription group.
    case upgraded
    /// A contract column changed in another way (auto-renew back on, environment, intent, …).
    case otherChange = "other_change"
    /// The same period ends later: Apple extended its renewal date (`extend`, `RENEWAL_EXTENDED`).
    case extended
    /// Nothing changed.
    case unchanged

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether `new` ends the billing retry (or grace period) `old` was in with a paid period:
    /// Apple recovered the charge. The change may be named `upgraded` when the recovery is on
    /// another product; this says recovered either way.
    public static func endsBillingRetry(_ old: SubscriptionState, _ new: SubscriptionState) -> Bool {
        guard old.originalTransactionID != nil, old.isInBillingRetry || old.gracePeriodExpiresAt != nil, new.cancelledAt == nil else { return false }
        return (new.expiresAt ?? .min) > (old.expiresAt ?? .min)
    }

    /// Names the most telling change from `old` to `new`, evaluated at `nowMs`.
    public static func between(_ old: SubscriptionState, _ new: SubscriptionState, at nowMs: Int64) -> Self {
        if old == new { return .unchanged }
        if old.originalTransactionID == nil { return .firstVerified }
        if new.cancelledAt != nil, old.cancelledAt == nil { return .refunded }
        if old.cancelledAt != nil, new.cancelledAt == nil, (new.expiresAt ?? .min) <= (old.expiresAt ?? .min) { return .refundReversed }
        let wasRetrying = old.isInBillingRetry || old.gracePeriodExpiresAt != nil
        if let newExpiry = new.expiresAt, newExpiry > (old.expiresAt ?? .min) {
            if old.productID != nil, new.productID != old.productID { return .upgraded }
            // The same period ends later: Apple extended the renewal date; nothing was paid.
            if !wasRetrying, let period = new.transactionID, period == old.transactionID, old.expiresAt != nil { return .extended }
            return wasRetrying ? .recovered : .renewed
        }
        if new.productID != old.productID, old.productID != nil { return .upgraded }
        if new.gracePeriodExpiresAt != nil, old.gracePeriodExpiresAt == nil { return .enteredGrace }
        if new.isInBillingRetry, !old.isInBillingRetry { return .enteredBillingRetry }
        if !new.entitlement(at: nowMs).isEntitled {
            // Access ends, or Apple confirms it ended: an intent appears or the retries stop.
            let wasEntitled = old.entitlement(at: nowMs).isEntitled
            let intentAppeared = old.expirationIntent == nil && new.expirationIntent != nil
            let retryStopped = old.isInBillingRetry && !new.isInBillingRetry
            if wasEntitled || intentAppeared || retryStopped { return .expired }
        }
        if old.autoRenewStatus != false, new.autoRenewStatus == false { return .autoRenewOff }
        return .otherChange
    }
}
