/// What a received notification does to the row it concerns: the same decision as a poll
/// (`EntitlementDecision` on its data), with the notification as provenance and the instant its
/// data was true, so `RowUpdatePlan` lets it win over older data and lose to newer. No receipt
/// was sent for it: the row keeps its own (V1's `latest_receipt` replaces it). Pure: a store calls
/// it inside the transaction that records the notification.
public struct NotificationIngest: Sendable {
    public var bundleID: String

    public init(bundleID: String) {
        self.bundleID = bundleID
    }

    /// What applying a notification to a row comes to.
    public enum Effect: Sendable, Equatable {
        /// Write this result through the row update plan.
        case write(ResultBatch.Result)
        /// Nothing to write; this is the notification's outcome.
        case settled(NotificationOutcome)
    }

    /// The effect of `notification` on `row`, the row owning its chain (or, owning none, the row
    /// its `appAccountToken` names), received at `nowMs`.
    public func effect(of notification: ReceivedNotification, on row: SubscriptionRow, nowMs: Int64) -> Effect {
        if let environment = notification.environment, let rowEnvironment = row.state.environment, rowEnvironment != environment.rawValue {
            return .settled(.otherEnvironment)
        }
        guard let answer = notification.answer, row.state.originalTransactionID == nil || row.state.originalTransactionID == notification.originalTransactionID,
            case .adopt(let state, let latestReceipt, let otherChains, let evidence) = EntitlementDecision.decide(answer: answer, row: row, bundleID: bundleID, nowMs: nowMs)
        else { return .settled(.ignored) }
        return .write(.verified(VerifiedUpdate(
            subscriptionID: row.id, provenance: notification.provenance, receiptSent: nil, state: state, otherChains: otherChains,
            latestReceipt: latestReceipt, upstreamStatus: answer.upstreamStatus, verifiedAtMs: nowMs, appleStateAtMs: notification.appleStateAtMs,
            evidence: evidence, transactions: answer.transactions, ledgerSource: notification.source == .history ? .history : .notification)))
    }

    /// The outcome a written plan comes to.
    public static func outcome(of plan: RowUpdatePlan) -> NotificationOutcome {
        switch plan.result {
        case .written?: return plan.transition == .unchanged ? .unchanged : .applied
        case .stale?: return .stale
        case .conflict?: return .conflict
        case .superseded?, .missing?, nil: return .unmatched
        }
    }
}
