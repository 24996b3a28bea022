/// Turns a verified notification into a result for the row that owns its chain: the same
/// decision as a poll (`EntitlementDecision` on the notification's transaction and renewal info),
/// with the notification as the result's provenance and its `signedDate` as the instant its data
/// was true, so `RowUpdatePlan` lets it win over older data and lose to newer. It keeps the row's
/// receipt. The result goes through any `SubscriptionWriter`, with no run and no checkpoint.
public struct NotificationIngest: Sendable {
    public var bundleID: String

    public init(bundleID: String) {
        self.bundleID = bundleID
    }

    /// What the notification does to `row` (the row owning its chain), received at `nowMs`; nil
    /// when it concerns no subscription of the row (no transaction, another chain, another app),
    /// which leaves the row's bookkeeping alone: a notification is not a failed verification.
    public func result(for notification: SignedNotification, row: SubscriptionRow, nowMs: Int64) -> ResultBatch.Result? {
        guard let answer = notification.answer, row.state.originalTransactionID == notification.originalTransactionID,
            case .adopt(let state, _, _) = EntitlementDecision.decide(answer: answer, row: row, bundleID: bundleID, nowMs: nowMs)
        else { return nil }
        return .verified(VerifiedUpdate(
            subscriptionID: row.id, provenance: notification.provenance, receiptSent: row.latestReceipt, state: state, latestReceipt: nil,
            upstreamStatus: answer.upstreamStatus, verifiedAtMs: nowMs, appleStateAtMs: notification.signedDateMs))
    }
}
