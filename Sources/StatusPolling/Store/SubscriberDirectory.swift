import EntitlementCore

/// The web service's side of the contract and the operator's view of it: enrol a subscriber,
/// store an uploaded receipt, look a user up, read the audit trail, the ledger and the notifications. The
/// operator commands (`enroll`, `show`, `history`, `notifications list`, `refunds`) and the demo's truth
/// check go through it.
public protocol SubscriberDirectory: Sendable {
    /// Inserts a subscriber as the web service does: a user and a receipt, nothing verified.
    @discardableResult
    func enroll(userID: String, receipt: String) async throws -> Int64

    /// Inserts many subscribers in one transaction (an import, the demo's enrolment); their ids in order.
    func enroll(_ subscribers: [(userID: String, receipt: String)]) async throws -> [Int64]

    /// Stores a receipt the app uploaded, as the web service does; the next run verifies it.
    func uploadReceipt(subscriptionID: Int64, receipt: String) async throws

    /// The rows of `userID`, in `id` order.
    func subscriptions(userID: String) async throws -> [SubscriptionRow]

    /// A user's rows with their bookkeeping, in `id` order (for `show`).
    func subscriptionsWithBookkeeping(userID: String) async throws -> [(SubscriptionRow, SubscriptionBookkeeping)]

    /// One page of every row after `cursor`, in `id` order, with its bookkeeping: for checks that
    /// walk the whole table without loading it at once.
    func subscriptionsWithBookkeeping(after cursor: Int64, limit: Int) async throws -> [(SubscriptionRow, SubscriptionBookkeeping)]

    /// The audit trail of `userID`'s rows, newest first.
    func history(userID: String, limit: Int) async throws -> [SubscriptionEvent]

    /// What the ledger holds of these transactions, by id (those it lacks are left out).
    func ledger(transactionIDs: [String]) async throws -> [LedgerRecord]

    /// One page of the ledger after transaction id `cursor`, in id order: for checks that walk it
    /// whole without loading it at once.
    func ledger(after cursor: String, limit: Int) async throws -> [LedgerRecord]

    /// The recorded notifications `query` asks for, newest first (never their signed payloads).
    func notifications(_ query: NotificationQuery) async throws -> [StoredNotification]
}

extension SubscriberDirectory {
    /// The newest 1,000 events of `userID`'s rows.
    public func history(userID: String) async throws -> [SubscriptionEvent] {
        try await history(userID: userID, limit: 1000)
    }
}
