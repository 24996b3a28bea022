/// How a notification finds the row it applies to, one rule for every store (which only answers
/// the lookups): the row owning the notification's chain; owning none, the first row in `id`
/// order without a chain whose `app_account_token` is the notification's — that row adopts the
/// chain — and only when the notification carries data to apply.
public enum NotificationMatch: Sendable, Hashable {
    /// The row whose `original_transaction_id` is this.
    case chain(String)
    /// The first row, in `id` order, without a chain and whose `app_account_token` is this.
    case token(String)

    /// The lookups for `notification`, in the order they are tried.
    public static func lookups(for notification: ReceivedNotification) -> [NotificationMatch] {
        var lookups: [NotificationMatch] = []
        if let chain = notification.originalTransactionID { lookups.append(.chain(chain)) }
        // Only data can be adopted: a token alone links nothing.
        if let token = notification.appAccountToken, notification.answer != nil { lookups.append(.token(token)) }
        return lookups
    }

    /// The row `notification` applies to: the first lookup `find` answers.
    public static func row(
        for notification: ReceivedNotification, _ find: (NotificationMatch) throws -> SubscriptionRow?
    ) rethrows -> SubscriptionRow? {
        for lookup in lookups(for: notification) {
            if let row = try find(lookup) { return row }
        }
        return nil
    }

    /// ``row(for:_:)`` with lookups that wait on the database.
    public static func row(
        for notification: ReceivedNotification, _ find: (NotificationMatch) async throws -> SubscriptionRow?
    ) async rethrows -> SubscriptionRow? {
        for lookup in lookups(for: notification) {
            if let row = try await find(lookup) { return row }
        }
        return nil
    }

    /// The outcome of a notification no row takes: `unmatched` when it has data (kept for a row
    /// enrolled later to adopt), `ignored` when it has none.
    public static func outcomeWithoutRow(_ notification: ReceivedNotification) -> NotificationOutcome {
        notification.answer == nil ? .ignored : .unmatched
    }

    /// `notifications` cut into runs, in order, such that none's match, effect or refund request
    /// depends on what an earlier one of its run writes — so a run's rows can be read at once and
    /// its results written together, with the effect of receiving them one by one. A run ends
    /// before a notification naming a chain or an `appAccountToken` that an earlier one of the run
    /// names (its own, or one its answer holds: an earlier write may adopt it, move it or enrol it
    /// as discovered), and before a refund request (which reads the row's failures and counts the
    /// customer's refunds as the writes before it left them). Distinct chains make one run.
    public static func rounds(_ notifications: [ReceivedNotification]) -> [Range<Int>] {
        var rounds: [Range<Int>] = [], start = 0, named: Set<String> = []
        for (position, n) in notifications.enumerated() {
            var names = Set((n.answer?.transactions ?? []).compactMap(\.originalTransactionID).map { "chain " + $0 })
            if let chain = n.originalTransactionID { names.insert("chain " + chain) }
            if let token = n.appAccountToken { names.insert("token " + token) }
            if position > start, n.type == "CONSUMPTION_REQUEST" || !named.isDisjoint(with: names) {
                rounds.append(start..<position)
                start = position
                named = []
            }
            named.formUnion(names)
        }
        if start < notifications.count { rounds.append(start..<notifications.count) }
        return rounds
    }
}
