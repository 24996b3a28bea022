/// A chain Apple answered without renewal info — none sent, or signed as JSON `null` or `{}` (genuine
/// Sandbox answers carry it) — with Apple's `status` of it, which still says whether billing retry
/// or a grace period runs.
public struct MissingRenewalInfo: Sendable, Equatable {
    public var originalTransactionID: String?
    /// Get All Subscription Statuses' `lastTransactions.status`, or a V2 notification's `data.status`.
    public var appleStatus: AppleSubscriptionStatus?

    public init(originalTransactionID: String?, appleStatus: AppleSubscriptionStatus?) {
        self.originalTransactionID = originalTransactionID
        self.appleStatus = appleStatus
    }
}
