import EntitlementCore

/// The type of an outbound event (`outbound_events.type`, the body's `type`): a small vocabulary
/// a web service can switch on, derived from the audit trail's change by ``init(reason:before:after:)``,
/// the one place the mapping is written. docs/EVENTS.md describes each word.
public enum EventKind: String, Sendable, CaseIterable, Codable {
    /// The subscription became known: its first verification, or a chain found in a receipt.
    case initialPurchase = "initial_purchase"
    /// A new period extended access without a lapse.
    case renewal
    /// A new period after access had ended (expired or refunded): the customer came back.
    case resubscribed
    /// The effective product changed within the subscription group (upgrade, downgrade, crossgrade).
    case productChange = "product_change"
    /// The customer turned auto-renew off: access ends at the end of the period.
    case autoRenewDisabled = "auto_renew_disabled"
    /// The customer turned auto-renew back on.
    case autoRenewEnabled = "auto_renew_enabled"
    /// A renewal charge failed: Apple retries it (billing retry), with access during a grace period if any.
    case billingIssue = "billing_issue"
    /// A charge being retried went through.
    case recovered
    /// Access ended (the body's `expiration_intent` says why when Apple sent one).
    case expired
    /// Apple refunded or revoked the current period: access ends now.
    case refunded
    /// Apple reversed the refund of a period: access is back as it was.
    case refundReversed = "refund_reversed"
    /// Apple refunded an earlier period; the current one keeps its access.
    case refundedEarlierPeriod = "refunded_earlier_period"
    /// Apple extended the current period's renewal date (`extend`, a mass extension): access lasts
    /// longer without a new purchase.
    case renewalExtended = "renewal_extended"
    /// Another contract column changed (environment, intent, billing plan, renewal product, …).
    case changed

    /// The event of one audit row: from why it was written and the contract columns before and
    /// after. Nil for an audit row that changes no contract column (an
    /// answer older than the row's data, a chain another row owns).
    public init?(reason: AuditReason, before: SubscriptionState, after: SubscriptionState) {
        switch reason {
        case .stale, .conflict: return nil
        case .discovered: self = .initialPurchase
        case .refundedEarlierPeriod: self = .refundedEarlierPeriod
        case .refundReversedEarlierPeriod: self = .refundReversed
        case .transition(let transition):
            guard let kind = Self.of(transition, before: before, after: after) else { return nil }
            self = kind
        }
    }

    private static func of(_ transition: SubscriptionTransition, before: SubscriptionState, after: SubscriptionState) -> EventKind? {
        switch transition {
        case .unchanged: return nil
        case .firstVerified: return .initialPurchase
        case .renewed: return lapsed(before, after) ? .resubscribed : .renewal
        case .upgraded:
            // A new product after access had ended is a comeback, whatever the product.
            let extended = (after.expiresAt ?? .min) > (before.expiresAt ?? .min)
            return extended && lapsed(before, after) ? .resubscribed : .productChange
        case .enteredGrace, .enteredBillingRetry: return .billingIssue
        case .recovered: return .recovered
        case .expired: return .expired
        case .autoRenewOff: return .autoRenewDisabled
        case .refunded: return .refunded
        case .refundReversed: return .refundReversed
        case .extended: return .renewalExtended
        case .otherChange:
            return before.autoRenewStatus == false && after.autoRenewStatus == true ? .autoRenewEnabled : .changed
        }
    }

    /// Whether the new period follows a lapse rather than the old period: the old one was refunded,
    /// Apple had said why it expired, or the new one began more than `renewalSlack` after the old
    /// access ended. Not "expired at the change's instant": a poll finds most renewals a few hours
    /// after the old expiry, and those are renewals.
    static func lapsed(_ before: SubscriptionState, _ after: SubscriptionState) -> Bool {
        if before.cancelledAt != nil || before.expirationIntent != nil { return true }
        guard let began = after.purchasedAt, let ended = before.expiresAt else { return false }
        return began > max(ended, before.gracePeriodExpiresAt ?? .min) + renewalSlack
    }

    /// How long after the old expiry a renewal's purchase may still fall (Apple charges a renewal
    /// up to a day before the expiry; a comeback begins when the customer buys again).
    static let renewalSlack: Int64 = 3_600_000
}
