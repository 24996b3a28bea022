/// A backend's answer about one row, normalised: the transactions and renewal info of every
/// subscription chain it returned, which the entitlement decision turns into contract columns.
public struct StatusAnswer: Sendable, Equatable {
    /// The backend's status for this answer, named with the backend (for the audit trail).
    public var upstreamStatus: UpstreamStatus
    /// The app the data belongs to, as the backend signed or stated it.
    public var bundleID: String?
    /// "Production" or "Sandbox", as the backend answered; nil keeps the row's.
    public var environment: String?
    /// Transactions of auto-renewable subscriptions (other purchases may be included; the
    /// decision leaves out entries without an expiry).
    public var transactions: [SubscriptionTransaction]
    /// What each chain does at its next renewal.
    public var renewals: [SubscriptionRenewalInfo]
    /// The receipt to store in place of the one sent (verifyReceipt's `latest_receipt`); nil keeps it.
    public var latestReceipt: String?
    /// How much of each chain the answer speaks for: its latest transaction (a poll), or one
    /// transaction that may be an earlier period (a V2 notification).
    public var scope: AnswerScope
    /// Apple's verdict on the subscription as of the answer (a V2 notification's `data.status`).
    public var subscriptionStatus: AppleSubscriptionStatus?
    /// Chains of a signed answer that came without renewal info: their renewal columns stay the
    /// row's, except what Apple's status says (verifyReceipt's are not listed: a chain without
    /// `pending_renewal_info` clears them, as it always has).
    public var missingRenewals: [MissingRenewalInfo]

    public init(
        upstreamStatus: UpstreamStatus, bundleID: String?, environment: String?, transactions: [SubscriptionTransaction],
        renewals: [SubscriptionRenewalInfo], latestReceipt: String? = nil, scope: AnswerScope = .latestTransaction,
        subscriptionStatus: AppleSubscriptionStatus? = nil, missingRenewals: [MissingRenewalInfo] = []
    ) {
        self.upstreamStatus = upstreamStatus
        self.bundleID = bundleID
        self.environment = environment
        self.transactions = transactions
        self.renewals = renewals
        self.latestReceipt = latestReceipt
        self.scope = scope
        self.subscriptionStatus = subscriptionStatus
        self.missingRenewals = missingRenewals
    }
}
