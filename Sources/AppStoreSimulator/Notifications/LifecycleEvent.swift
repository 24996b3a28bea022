/// One moment a subscription changed, as the App Store notifies it: read from a chain's history,
/// so every change of the truth (and nothing else) has its event. The demo measures how long each
/// takes to reach its row; the notification outbox posts each one.
public struct LifecycleEvent: Sendable, Equatable {
    /// New kinds go at the end: a kind's place seeds its notifications' ids.
    public enum Kind: String, Sendable, CaseIterable {
        case subscribed, resubscribed, renewed, recovered
        /// A renewal charge failed and Apple retries it, without a billing grace period.
        case failedToRenew
        case gracePeriodExpired
        case expiredVoluntarily, expiredAfterBillingRetry
        /// The current period refunded: access ends.
        case refunded
        case autoRenewDisabled, autoRenewEnabled
        /// At once: the old transaction `isUpgraded`, a new one of the higher level starts now.
        case upgraded
        /// At the next renewal: only the renewal info's `autoRenewProductId` changes now.
        case downgraded
        /// The customer asked for a transaction's money back (`CONSUMPTION_REQUEST`; V2 only).
        case refundRequested
        /// Apple declined that request (`REFUND_DECLINED`; V2 only): nothing changes.
        case refundDeclined
        /// An earlier period refunded while the current one runs on: no access changes.
        case refundedEarlierPeriod
        /// Apple reversed the refund of the current period (`REFUND_REVERSED`; V2 only): access is back.
        case refundReversed
        /// Apple reversed the refund of an earlier period (V2 only): no access changes.
        case earlierRefundReversed
        /// A Family Sharing member's access revoked (`REVOKE`): the purchaser stopped sharing or was refunded.
        case revoked
        /// A renewal charge failed inside a billing grace period (`DID_FAIL_TO_RENEW/GRACE_PERIOD`).
        case failedToRenewInGracePeriod
        /// Apple extended the renewal date (`RENEWAL_EXTENDED`; V2 only): the period ends later.
        case renewalExtended
        /// A mass extension could not extend this subscription (`RENEWAL_EXTENSION/FAILURE`; V2 only).
        case renewalExtensionFailed
    }

    public var kind: Kind
    public var atMs: Int64
    public var subscriberIndex: Int
    public var originalTransactionID: String
    /// The transaction the event is about, which its notification carries: the new one of a
    /// purchase or renewal, the refunded or requested one (maybe an earlier period's); nil for
    /// the chain's current transaction.
    public var transactionID: String?

    public init(kind: Kind, atMs: Int64, subscriberIndex: Int, originalTransactionID: String, transactionID: String? = nil) {
        self.kind = kind
        self.atMs = atMs
        self.subscriberIndex = subscriberIndex
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
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
        case .refundRequested: ("CONSUMPTION_REQUEST", nil)
        case .refundDeclined: ("REFUND_DECLINED", nil)
        case .refundedEarlierPeriod: ("REFUND", nil)
        case .refundReversed, .earlierRefundReversed: ("REFUND_REVERSED", nil)
        case .revoked: ("REVOKE", nil)
        case .failedToRenewInGracePeriod: ("DID_FAIL_TO_RENEW", "GRACE_PERIOD")
        case .renewalExtended: ("RENEWAL_EXTENDED", nil)
        case .renewalExtensionFailed: ("RENEWAL_EXTENSION", "FAILURE")
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
        case .failedToRenew, .failedToRenewInGracePeriod: "DID_FAIL_TO_RENEW"
        case .gracePeriodExpired, .expiredVoluntarily: nil
        // Apple's V1 life-cycle table: churn after failed retries arrives as a renewal status change.
        case .expiredAfterBillingRetry, .autoRenewDisabled, .autoRenewEnabled: "DID_CHANGE_RENEWAL_STATUS"
        case .refunded, .refundedEarlierPeriod: "REFUND"
        case .downgraded: "DID_CHANGE_RENEWAL_PREF"
        case .revoked: "REVOKE"
        // V1's CONSUMPTION_REQUEST is for consumables only; it has no declined or reversed refund.
        case .refundRequested, .refundDeclined, .refundReversed, .earlierRefundReversed: nil
        // Renewal-date extensions came with notifications V2.
        case .renewalExtended, .renewalExtensionFailed: nil
        }
    }

    /// Whether the truth's columns change with it: not with a refund request, a declined one, or
    /// the refund of an earlier period and its reversal (the current period stays as it was).
    public var changesEntitlement: Bool {
        ![.refundRequested, .refundDeclined, .refundedEarlierPeriod, .earlierRefundReversed, .renewalExtensionFailed].contains(kind)
    }

    /// The events the demo reports apart: money coming back and money going out.
    public var isRecovery: Bool { kind == .recovered }
    public var isRefund: Bool { kind == .refunded }
}

extension SimulatedChain {
    /// Every change of this chain, in time order (ties keep the order below).
    func lifecycleEvents(subscriberIndex: Int) -> [LifecycleEvent] {
        var events: [LifecycleEvent] = []
        func add(_ kind: LifecycleEvent.Kind, _ at: Int64, _ transaction: Transaction? = nil) {
            events.append(LifecycleEvent(
                kind: kind, atMs: at, subscriberIndex: subscriberIndex, originalTransactionID: originalTransactionID, transactionID: transaction?.transactionID))
        }
        let recoveries = Set(billingRetries.filter(\.recovered).map(\.endMs))
        let purchased = Dictionary(purchases.map { ($0.atMs, $0.kind) }, uniquingKeysWith: { first, _ in first })
        for (index, transaction) in transactions.enumerated() {
            if index == 0 {
                add(.subscribed, transaction.purchaseMs, transaction)
            } else if let kind = purchased[transaction.purchaseMs] {
                add(kind == .upgrade ? .upgraded : .resubscribed, transaction.purchaseMs, transaction)
            } else {
                add(recoveries.contains(transaction.purchaseMs) ? .recovered : .renewed, transaction.purchaseMs, transaction)
            }
            if let asked = transaction.refundRequestedAtMs { add(.refundRequested, asked, transaction) }
            if let declined = transaction.refundDeclinedAtMs { add(.refundDeclined, declined, transaction) }
            // Whether the refund is of the period then current, or of an earlier one.
            func isCurrent(at ms: Int64) -> Bool { current(at: ms)?.transactionID == transaction.transactionID }
            if let refunded = transaction.refundedAtMs {
                add(isFamilyShared ? .revoked : isCurrent(at: refunded) ? .refunded : .refundedEarlierPeriod, refunded, transaction)
            }
            if let reversed = transaction.refundReversedAtMs { add(isCurrent(at: reversed) ? .refundReversed : .earlierRefundReversed, reversed, transaction) }
        }
        for retry in billingRetries {
            add(retry.graceEndMs == nil ? .failedToRenew : .failedToRenewInGracePeriod, retry.startMs)
            if let grace = retry.graceEndMs, !retry.recovered || retry.endMs > grace { add(.gracePeriodExpired, grace) }
            if !retry.recovered { add(.expiredAfterBillingRetry, retry.endMs) }
        }
        for lapse in lapses where lapse.intent == 1 { add(.expiredVoluntarily, lapse.atMs) }
        for granted in extensions { add(.renewalExtended, granted.atMs) }
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
