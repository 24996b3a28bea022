/// The contract: the columns of `subscriptions` the web service reads to grant access, described
/// once. Each store derives from this table its SELECT lists, its reading of a row, its writes and
/// its audit snapshots; a test checks both stores' migrated schemas against it. Adding a column is
/// one case here (with its kind and Apple field), its property on ``SubscriptionState``, and a
/// migration in each store.
///
/// Only status-poller writes these columns (the web service writes `user_id`, `latest_receipt`
/// and `receipt_uploaded`), and only from Apple's answers: the poller never invents a value.
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

    /// The kind of value the column holds; it decides the SQL type in each store.
    public var kind: ContractValue.Kind {
        switch self {
        case .originalTransactionID, .productID, .environment, .autoRenewProductID, .transactionID, .ownershipType, .billingPlanType,
            .renewalBillingPlanType:
            return .text
        case .expiresAt, .gracePeriodExpiresAt, .cancelledAt, .purchasedAt, .commitmentExpiresAt: return .time
        case .isInBillingRetry, .autoRenewStatus: return .flag
        case .expirationIntent, .commitmentPeriod, .commitmentPeriods: return .number
        }
    }

    /// `NOT NULL` in both stores: only the billing-retry flag, which is false until Apple says otherwise.
    public var isRequired: Bool { self == .isInBillingRetry }

    /// Where Apple says it: verifyReceipt's field, then the App Store Server API's (`—` where
    /// that backend has none). `docs/DATABASE.md` names each in its table of columns.
    public var appleField: (verifyReceipt: String, serverAPI: String) {
        switch self {
        case .originalTransactionID: return ("original_transaction_id", "originalTransactionId")
        case .productID: return ("product_id", "productId")
        case .environment: return ("environment", "environment")
        case .expiresAt: return ("expires_date_ms", "expiresDate")
        case .gracePeriodExpiresAt: return ("grace_period_expires_date_ms", "gracePeriodExpiresDate")
        case .isInBillingRetry: return ("is_in_billing_retry_period", "isInBillingRetryPeriod")
        case .autoRenewStatus: return ("auto_renew_status", "autoRenewStatus")
        case .autoRenewProductID: return ("auto_renew_product_id", "autoRenewProductId")
        case .expirationIntent: return ("expiration_intent", "expirationIntent")
        case .cancelledAt: return ("cancellation_date_ms", "revocationDate")
        case .transactionID: return ("transaction_id", "transactionId")
        case .purchasedAt: return ("purchase_date_ms", "purchaseDate")
        case .ownershipType: return ("in_app_ownership_type", "inAppOwnershipType")
        case .billingPlanType: return ("—", "billingPlanType")
        case .commitmentPeriod: return ("—", "commitmentInfo.billingPeriodNumber")
        case .commitmentPeriods: return ("—", "commitmentInfo.totalBillingPeriods")
        case .commitmentExpiresAt: return ("—", "commitmentInfo.commitmentExpiresDate")
        case .renewalBillingPlanType: return ("—", "renewalBillingPlanType (renewal info)")
        }
    }

    /// The column names in schema order, comma-separated: every store's SELECT and INSERT list.
    public static let list = allCases.map(\.rawValue).joined(separator: ", ")

    /// The columns in the order of their names: the audit trail's JSON keeps its keys sorted.
    public static let sortedByName = allCases.sorted { $0.rawValue < $1.rawValue }

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

    /// Sets this column of `state` to `value`, which a store read as this column's ``kind``.
    public func set(_ value: ContractValue, in state: inout SubscriptionState) {
        switch self {
        case .originalTransactionID: state.originalTransactionID = value.text
        case .productID: state.productID = value.text
        case .environment: state.environment = value.text
        case .expiresAt: state.expiresAt = value.time
        case .gracePeriodExpiresAt: state.gracePeriodExpiresAt = value.time
        case .isInBillingRetry: state.isInBillingRetry = value.flag ?? false
        case .autoRenewStatus: state.autoRenewStatus = value.flag
        case .autoRenewProductID: state.autoRenewProductID = value.text
        case .expirationIntent: state.expirationIntent = value.number
        case .cancelledAt: state.cancelledAt = value.time
        case .transactionID: state.transactionID = value.text
        case .purchasedAt: state.purchasedAt = value.time
        case .ownershipType: state.ownershipType = value.text
        case .billingPlanType: state.billingPlanType = value.text
        case .commitmentPeriod: state.commitmentPeriod = value.number
        case .commitmentPeriods: state.commitmentPeriods = value.number
        case .commitmentExpiresAt: state.commitmentExpiresAt = value.time
        case .renewalBillingPlanType: state.renewalBillingPlanType = value.text
        }
    }
}

extension SubscriptionState {
    /// The contract columns whose values differ between `self` and `other`, in schema order.
    public func changedColumns(comparedWith other: SubscriptionState) -> [ContractColumn] {
        ContractColumn.allCases.filter { $0.value(in: self) != $0.value(in: other) }
    }

    /// A state read column by column: `read` gives each column's value as its ``ContractColumn/kind``
    /// says, in schema order (a store reading a row by position calls it in that order).
    public init(reading read: (ContractColumn) throws -> ContractValue) rethrows {
        self.init()
        for column in ContractColumn.allCases { column.set(try read(column), in: &self) }
    }
}
