/// One side of an audit row as the report reads it: the columns the `entitlements` view and the
/// billing episodes depend on, without the identifiers (original_transaction_id, product ids).
/// The report never shows those, and at a million subscriptions their strings were most of its
/// memory and time.
public struct TrailState: Sendable, Equatable {
    /// `original_transaction_id` is set: the row has been verified.
    public var isVerified: Bool
    public var expiresAt: Int64?
    public var gracePeriodExpiresAt: Int64?
    public var isInBillingRetry: Bool
    public var autoRenewStatus: Bool?
    public var expirationIntent: Int?
    public var cancelledAt: Int64?

    public init(
        isVerified: Bool, expiresAt: Int64?, gracePeriodExpiresAt: Int64?, isInBillingRetry: Bool, autoRenewStatus: Bool?,
        expirationIntent: Int?, cancelledAt: Int64?
    ) {
        self.isVerified = isVerified
        self.expiresAt = expiresAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.isInBillingRetry = isInBillingRetry
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.cancelledAt = cancelledAt
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

    /// What the `entitlements` view would have said of these columns at `nowMs`.
    public func entitlement(at nowMs: Int64) -> EntitlementState {
        EntitlementState(
            isVerified: isVerified, cancelledAt: cancelledAt, expiresAt: expiresAt, gracePeriodExpiresAt: gracePeriodExpiresAt,
            isInBillingRetry: isInBillingRetry, at: nowMs)
    }
}
