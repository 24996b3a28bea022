/// What the report reads from a store: the audit trail in `id` order, a page at a time, so one
/// pass holds one page of it and never the whole table.
public protocol SubscriptionTrail: Sendable {
    /// Up to `limit` trail rows with an id above `id`, in `id` order.
    func trailEvents(after id: Int64, limit: Int) async throws -> [TrailEvent]
}
