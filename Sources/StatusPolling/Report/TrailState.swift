import EntitlementCore

/// One side of an audit row as the report reads it: the columns the `entitlements` view and the
/// billing episodes depend on, without the identifiers (original_transaction_id, product ids).
/// The report never shows those, and at a million subscriptions their strings were most of its
/// memory and time. Stored in 32 bytes (an absent instant as `Int64.min`): the report keeps one
/// per subscription.
public struct TrailState: Sendable, Equatable {
    private var expires: Int64
    private var grace: Int64
    private var cancelled: Int64
    /// `expiration_intent`, −1 when absent.
    private var intent: Int8
    private var flags: UInt8

    private static let absent = Int64.min
    private static let verified: UInt8 = 1, retry: UInt8 = 2, autoRenewKnown: UInt8 = 4, autoRenewOn: UInt8 = 8

    public init(
        isVerified: Bool, expiresAt: Int64?, gracePeriodExpiresAt: Int64?, isInBillingRetry: Bool, autoRenewStatus: Bool?,
        expirationIntent: Int?, cancelledAt: Int64?
    ) {
        expires = expiresAt ?? Self.absent
        grace = gracePeriodExpiresAt ?? Self.absent
        cancelled = cancelledAt ?? Self.absent
        intent = expirationIntent.map { Int8(clamping: $0) } ?? -1
        flags = (isVerified ? Self.verified : 0) | (isInBillingRetry ? Self.retry : 0)
            | (autoRenewStatus == nil ? 0 : Self.autoRenewKnown) | (autoRenewStatus == true ? Self.autoRenewOn : 0)
    }

    /// The report's columns of a whole row.
    public init(_ state: SubscriptionState) {
        self.init(
            isVerified: state.originalTransactionID != nil, expiresAt: state.expiresAt, gracePeriodExpiresAt: state.gracePeriodExpiresAt,
            isInBillingRetry: state.isInBillingRetry, autoRenewStatus: state.autoRenewStatus, expirationIntent: state.expirationIntent,
            cancelledAt: state.cancelledAt)
    }

    /// A row never verified.
    public static let unverified = TrailState(SubscriptionState.unverified)

    /// `original_transaction_id` is set: the row has been verified.
    public var isVerified: Bool { flags & Self.verified != 0 }
    public var expiresAt: Int64? { expires == Self.absent ? nil : expires }
    public var gracePeriodExpiresAt: Int64? { grace == Self.absent ? nil : grace }
    public var isInBillingRetry: Bool { flags & Self.retry != 0 }
    public var autoRenewStatus: Bool? { flags & Self.autoRenewKnown == 0 ? nil : flags & Self.autoRenewOn != 0 }
    public var expirationIntent: Int? { intent < 0 ? nil : Int(intent) }
    public var cancelledAt: Int64? { cancelled == Self.absent ? nil : cancelled }

    /// What the `entitlements` view would have said of these columns at `nowMs`.
    public func entitlement(at nowMs: Int64) -> EntitlementState {
        EntitlementState(
            isVerified: isVerified, cancelledAt: cancelledAt, expiresAt: expiresAt, gracePeriodExpiresAt: gracePeriodExpiresAt,
            isInBillingRetry: isInBillingRetry, at: nowMs)
    }
}
