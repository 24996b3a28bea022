import EntitlementCore
import StatusPolling

extension SubscriptionStore {
    /// The row with `id`, as the run would read it (nil: deleted).
    func subscription(id: Int64) async throws -> SubscriptionRow? {
        try await subscriptions(ids: [id]).first
    }
}
