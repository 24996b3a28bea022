import EntitlementCore

/// The ledger's columns (`subscription_transactions`), described once: each store's migration
/// declares them (a test checks both against this table), and ``LedgerSQL`` derives its insert
/// list, its JSON and how each column merges with what the ledger holds from ``rule``.
public enum LedgerColumn: String, CaseIterable, Sendable {
    case transactionID = "transaction_id"
    case originalTransactionID = "original_transaction_id"
    case subscriptionID = "subscription_id"
    case productID = "product_id"
    case environment
    case purchasedAt = "purchased_at"
    case expiresAt = "expires_at"
    case revokedAt = "revoked_at"
    case revocationReason = "revocation_reason"
    case revocationType = "revocation_type"
    case revocationPercentage = "revocation_percentage"
    case isUpgraded = "is_upgraded"
    case price
    case currency
    case storefront
    case storefrontID = "storefront_id"
    case transactionReason = "transaction_reason"
    case offerType = "offer_type"
    case offerIdentifier = "offer_identifier"
    case offerDiscountType = "offer_discount_type"
    case offerPeriod = "offer_period"
    case ownershipType = "in_app_ownership_type"
    case webOrderLineItemID = "web_order_line_item_id"
    case billingPlanType = "billing_plan_type"
    case signedAt = "signed_at"
    case asOf = "as_of"
    case firstSource = "first_source"
    case firstSeenAt = "first_seen_at"
    case updatedAt = "updated_at"
    /// 1 when a row recovered from billing retry with this transaction, else NULL (added by the
    /// next migration, so last).
    case billingRecovery = "billing_recovery"

    /// What a column holds, and so its SQL type in each store.
    public enum Kind: Sendable {
        case text, integer, flag

        /// The declared type in SQLite's schema.
        public var sqliteType: String { self == .text ? "TEXT" : "INTEGER" }

        /// The declared type in PostgreSQL's schema: every integer a `bigint` (milliunits of some
        /// currencies pass 2³¹), a flag 0/1 in a `smallint` as in `subscriptions`.
        public var postgresType: String {
            switch self {
            case .text: "text"
            case .integer: "bigint"
            case .flag: "smallint"
            }
        }
    }

    /// How an entry's value merges with the one the ledger holds (``LedgerSQL``).
    public enum Rule: Sendable {
        /// Written once, by the insert: the key, the chain, who brought it first and when.
        case firstWritten
        /// A fact of the transaction that never changes: the first value known stays, and a
        /// source without it (verifyReceipt's price) never erases it.
        case fact
        /// What Apple may change later (a renewal-date extension, a refund, an upgrade): the value
        /// of the entry that takes precedence.
        case changeable
        /// A detail of the revocation: cleared with it (a reversal); a newer answer without it that
        /// shows the same revocation keeps the one known.
        case revocationDetail
        /// When Apple signed the values held: taken with them, but a change on its own (Apple signs
        /// every answer anew) is none.
        case signing
        /// The row owning the chain: the newest writer's.
        case owner
        /// When the values held were true: moves with them.
        case asOf
        /// When the ledger row was last written.
        case touched
    }

    public var kind: Kind {
        switch self {
        case .subscriptionID, .purchasedAt, .expiresAt, .revokedAt, .revocationReason, .revocationPercentage, .price, .offerType, .signedAt, .asOf,
            .firstSeenAt, .updatedAt, .billingRecovery:
            .integer
        case .isUpgraded: .flag
        default: .text
        }
    }

    public var rule: Rule {
        switch self {
        case .transactionID, .originalTransactionID, .firstSource, .firstSeenAt: .firstWritten
        case .expiresAt, .revokedAt, .isUpgraded: .changeable
        case .revocationReason, .revocationType, .revocationPercentage: .revocationDetail
        case .signedAt: .signing
        case .subscriptionID: .owner
        case .asOf: .asOf
        case .updatedAt: .touched
        default: .fact
        }
    }

    /// `NOT NULL` in both stores.
    public var isRequired: Bool {
        switch self {
        case .transactionID, .originalTransactionID, .isUpgraded, .asOf, .firstSource, .firstSeenAt, .updatedAt: true
        default: false
        }
    }

    /// The column names in schema order, comma-separated.
    public static let list = allCases.map(\.rawValue).joined(separator: ", ")

    /// This column's value in `entry` (a flag as 0/1).
    public func value(in entry: LedgerEntry) -> SQLValue {
        let t = entry.transaction, facts = t.facts
        switch self {
        case .transactionID: return SQLValue(t.transactionID)
        case .originalTransactionID: return SQLValue(t.originalTransactionID)
        case .subscriptionID: return SQLValue(entry.subscriptionID)
        case .productID: return SQLValue(t.productID)
        case .environment: return SQLValue(entry.environment)
        case .purchasedAt: return SQLValue(t.purchaseDateMs)
        case .expiresAt: return SQLValue(t.expiresDateMs)
        case .revokedAt: return SQLValue(t.revocationDateMs)
        case .revocationReason: return SQLValue(t.revocationDateMs == nil ? nil : facts.revocationReason)
        case .revocationType: return SQLValue(t.revocationDateMs == nil ? nil : facts.revocationType)
        case .revocationPercentage: return SQLValue(t.revocationDateMs == nil ? nil : facts.revocationPercentage)
        case .isUpgraded: return SQLValue(t.isUpgraded)
        case .price: return SQLValue(facts.price)
        case .currency: return SQLValue(facts.currency)
        case .storefront: return SQLValue(facts.storefront)
        case .storefrontID: return SQLValue(facts.storefrontID)
        case .transactionReason: return SQLValue(facts.transactionReason)
        case .offerType: return SQLValue(facts.offerType)
        case .offerIdentifier: return SQLValue(facts.offerIdentifier)
        case .offerDiscountType: return SQLValue(facts.offerDiscountType)
        case .offerPeriod: return SQLValue(facts.offerPeriod)
        case .ownershipType: return SQLValue(t.ownershipType)
        case .webOrderLineItemID: return SQLValue(facts.webOrderLineItemID)
        case .billingPlanType: return SQLValue(t.commitment?.billingPlanType)
        case .signedAt: return SQLValue(facts.signedAtMs)
        case .asOf: return SQLValue(entry.asOfMs)
        case .firstSource: return SQLValue(entry.source.rawValue)
        case .firstSeenAt, .updatedAt: return SQLValue(entry.atMs)
        case .billingRecovery: return SQLValue(entry.endsBillingRetry ? 1 : nil)
        }
    }
}
