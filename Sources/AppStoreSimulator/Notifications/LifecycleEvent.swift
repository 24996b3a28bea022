/// One moment a subscription changed, as the App Store notifies it: read from a chain's history,
/// so every change of the truth (and nothing else) has its event. The demo measures how long each
/// takes to reach its row; the notification outbox posts each one.
public struct LifecycleEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case subscribed, resubscribed, renewed, recovered, failedToRenew, gracePeriodExpired
        case expiredVoluntarily, expiredAfterBillingRetry, refunded, autoRenewDisabled, autoRenewEnabled, upgraded, downgraded
    }

    public var kind: Kind
    public var atMs: Int64
    public var subscriberIndex: Int
    public var originalTransactionID: String

    public init(kind: Kind, atMs: Int64, subscriberIndex: Int, originalTransactionID: String) {
        self.kind = kind
        self.atMs = atMs
        self.subscriberIndex = subscriberIndex
        self.originalTransactionID = originalTransactionID
    }

    /// `notificationType` and `subtype` of App Store Server Notifications V2.
    public var version2: (type: String, subtype: String?) {
        switch kind {
        case .subscribed: ("SUBSCRIBED", "INITIAL_BUY")
        case .resubscribed: ("SUBSCRIBED", "RESUBSCRIBE")
        case .renewed: ("DID_RENEW", nil)
        case .recovered: ("DID_RENEW", "BILLING_RECOVERY")
        case .failedToRenew: ("DID_FAIL_TO_RENEW", nil)
        case .gracePeriodExpired: ("GRACE_PERIOD_EXPIRED", nil)
        case .expiredVoluntarily: ("EXPIRED", "VOLUNTARY")
        case .expiredAfterBillingRetry: ("EXPIRED", "BILLING_RETRY")
        case .refunded: ("REFUND", nil)
        case .autoRenewDisabled: ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED")
        case .autoRenewEnabled: ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED")
        case .upgraded: ("DID_CHANGE_RENEWAL_PREF", "UPGRADE")
        case .downgraded: ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE")
        }
    }

    /// `notification_type` of V1 (seed 004's types), nil where V1 has none: it sends nothing when
    /// a grace period or a voluntary subscription ends, and polling hears those.
    public var version1: String? {
        switch kind {
        case .subscribed: "INITIAL_BUY"
        case .resubscribed, .upgraded: "INTERACTIVE_RENEWAL"
        case .renewed: "DID_RENEW"
        case .recovered: "DID_RECOVER"
        case .failedToRenew: "DID_FAIL_TO_RENEW"
        case .gracePeriodExpired, .expiredVoluntarily: nil
        // Apple's V1 life-cycle table: churn after failed retries arrives as a renewal status change.
        case .expiredAfterBillingRetry, .autoRenewDisabled, .autoRenewEnabled: "DID_CHANGE_RENEWAL_STATUS"
        case .refunded: "REFUND"
        case .downgraded: "DID_CHANGE_RENEWAL_PREF"
        }
    }

    /// The events the demo reports apart: money coming back and money going out.
    public var isRecovery: Bool { kind == .recovered }
    public var isRefund: Bool { kind == .refunded }
}

extension SimulatedChain {
    /// Every change of this chain, in time order (ties keep the order below).
    func lifecycleEvents(subscriberIndex: Int) -> [LifecycleEvent] {
        var events: [LifecycleEvent] = []
        func add(_ kind: LifecycleEvent.Kind, _ at: Int64) {
            events.append(LifecycleEvent(kind: kind, atMs: at, subscriberIndex: subscriberIndex, originalTransactionID: originalTransactionID))
        }
        let recoveries = Set(billingRetries.filter(\.recovered).map(\.endMs))
        let purchased = Dictionary(purchases.map { ($0.atMs, $0.kind) }, uniquingKeysWith: { first, _ in first })
        for (index, transaction) in transactions.enumerated() {
            if index == 0 {
                add(.subscribed, transaction.purchaseMs)
            } else if let kind = purchased[transaction.purchaseMs] {
                add(kind == .upgrade ? .upgraded : .resubscribed, transaction.purchaseMs)
            } else {
                add(recoveries.contains(transaction.purchaseMs) ? .recovered : .renewed, transaction.purchaseMs)
            }
            if let refunded = transaction.refundedAtMs { add(.refunded, refunded) }
        }
        for retry in billingRetries {
            add(.failedToRenew, retry.startMs)
            if let grace = retry.graceEndMs, !retry.recovered || retry.endMs > grace { add(.gracePeriodExpired, grace) }
            if !retry.recovered { add(.expiredAfterBillingRetry, retry.endMs) }
        }
        for lapse in lapses where lapse.intent == 1 { add(.expiredVoluntarily, lapse.atMs) }
        // Renewal status changes other than those a purchase or a refund makes itself.
        let refunds = Set(transactions.compactMap(\.refundedAtMs))
        for (index, change) in autoRenew.enumerated() where index > 0 && purchased[change.atMs] == nil && !refunds.contains(change.atMs) {
            add(change.value ? .autoRenewEnabled : .autoRenewDisabled, change.atMs)
        }
        for (index, change) in autoRenewProduct.enumerated() where index > 0 && purchased[change.atMs] == nil {
            add(.downgraded, change.atMs)
        }
        return events.enumerated().sorted { ($0.element.atMs, $0.offset) < ($1.element.atMs, $1.offset) }.map(\.element)
    }
}

extension Population {
    /// Every lifecycle event in (after, through], in time order.
    public func lifecycleEvents(after: Int64, through: Int64) -> [LifecycleEvent] {
        subscribers.flatMap { subscriber in
            subscriber.chains.flatMap { $0.lifecycleEvents(subscriberIndex: subscriber.index) }.filter { $0.atMs > after && $0.atMs <= through }
        }.sorted { ($0.atMs, $0.subscriberIndex) < ($1.atMs, $1.subscriberIndex) }
    }
}
