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
}
