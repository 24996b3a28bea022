/// The contract columns by their schema names, in the schema's order: the one list that `show`,
/// `history` and the demo's truth check walk to print or compare a ``SubscriptionState``.
public enum ContractColumn: String, CaseIterable, CodingKey, Sendable {
    case originalTransactionID = "original_transaction_id"
    case productID = "product_id"
    case environment
    case expiresAt = "expires_at"
    case gracePeriodExpiresAt = "grace_period_expires_at"
    case isInBillingRetry = "is_in_billing_retry"
    case autoRenewStatus = "auto_renew_status"
    case autoRenewProductID = "auto_renew_product_id"
    case expirationIntent = "expiration_intent"
    case cancelledAt = "cancelled_at"
    case transactionID = "transaction_id"
    case purchasedAt = "purchased_at"
    case ownershipType = "in_app_ownership_type"
    case billingPlanType = "billing_plan_type"
    case commitmentPeriod = "commitment_period"
    case commitmentPeriods = "commitment_periods"
    case commitmentExpiresAt = "commitment_expires_at"
    case renewalBillingPlanType = "renewal_billing_plan_type"

    /// This column's value in `state`.
    public func value(in state: SubscriptionState) -> ContractValue {
        switch self {
        case .originalTransactionID: return .text(state.originalTransactionID)
        case .productID: return .text(state.productID)
        case .environment: return .text(state.environment)
        case .expiresAt: return .time(state.expiresAt)
        case .gracePeriodExpiresAt: return .time(state.gracePeriodExpiresAt)
        case .isInBillingRetry: return .flag(state.isInBillingRetry)
        case .autoRenewStatus: return .flag(state.autoRenewStatus)
        case .autoRenewProductID: return .text(state.autoRenewProductID)
        case .expirationIntent: return .number(state.expirationIntent)
        case .cancelledAt: return .time(state.cancelledAt)
        case .transactionID: return .text(state.transactionID)
        case .purchasedAt: return .time(state.purchasedAt)
        case .ownershipType: return .text(state.ownershipType)
        case .billingPlanType: return .text(state.billingPlanType)
        case .commitmentPeriod: return .number(state.commitmentPeriod)
        case .commitmentPeriods: return .number(state.commitmentPeriods)
        case .commitmentExpiresAt: return .time(state.commitmentExpiresAt)
        case .renewalBillingPlanType: return .text(state.renewalBillingPlanType)
        }
    }
}

extension SubscriptionState {
    /// The contract columns whose values differ between `self` and `other`, in schema order.
    public func changedColumns(comparedWith other: SubscriptionState) -> [ContractColumn] {
        ContractColumn.allCases.filter { $0.value(in: self) != $0.value(in: other) }
    }
}
