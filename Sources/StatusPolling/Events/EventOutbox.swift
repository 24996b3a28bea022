/// The store's side of the event feed: what the deliverer and the `events` commands need, in our
/// terms. Both stores implement it with the shared SQL of ``EventDeliverySQL``; on PostgreSQL
/// several deliverers share it through leases.
public protocol EventOutbox: Sendable {
    /// Adds to `endpoint`'s deliveries every event written since its last call (a new endpoint:
    /// every event still in the outbox), due at `nowMs`; returns how many.
    func fanOut(endpoint: String, nowMs: Int64) async throws -> Int

    /// Takes up to `limit` deliveries to `endpoint` for `owner` until `leaseUntilMs`: of each user,
    /// only the oldest event not yet delivered, and only when it is due at `nowMs` and no other
    /// deliverer holds it. So a user's next event waits for the previous one's success (or its
    /// dead-lettering), and different users' go at once.
    func takeDeliveries(endpoint: String, owner: String, nowMs: Int64, leaseUntilMs: Int64, limit: Int) async throws -> [EventDelivery]

    /// Records the outcomes of `owner`'s attempts (a retry or a dead-lettering only while `owner`
    /// still holds the delivery; a success always).
    func settle(_ outcomes: [DeliveryOutcome], endpoint: String, owner: String) async throws

    /// The soonest time a pending delivery to `endpoint` falls due; nil when none is pending.
    func nextDue(endpoint: String) async throws -> Int64?

    /// Events and their deliveries, newest first: all, or only those pending or dead.
    func events(_ filter: EventFilter, limit: Int) async throws -> [StoredEvent]

    /// Makes deliveries pending again, due at `nowMs` with their attempts reset: the event `eventID`,
    /// or every event written since `sinceMs`; on `endpoint` only, or on every endpoint. An event no
    /// endpoint has yet is left to the next fan-out. Returns how many deliveries.
    func replay(_ selection: ReplaySelection, endpoint: String?, nowMs: Int64) async throws -> Int

    /// Deletes events written before `beforeMs` that no delivery waits for; returns how many.
    func pruneEvents(writtenBeforeMs: Int64) async throws -> Int

    /// Deliveries by state (`pending`, `delivered`, `dead`) and the outbox's size (`events`).
    func deliveryCounts() async throws -> [String: Int]

    /// Whether ``ringOnNewEvents(_:)`` tells of new events (PostgreSQL: `LISTEN` on the outbox's
    /// channel); false (SQLite): the deliverer looks every idle period.
    var ringsOnNewEvents: Bool { get }

    /// Rings `bell` once listening (what was written before is then looked at) and at every
    /// notification of new events, until the task is cancelled (then it returns); a lost
    /// connection is opened again. Returns at once where ``ringsOnNewEvents`` is false.
    func ringOnNewEvents(_ bell: Doorbell) async throws
}

extension EventOutbox {
    public var ringsOnNewEvents: Bool { false }
    public func ringOnNewEvents(_ bell: Doorbell) async throws {}
}

/// Which events `events list` shows.
public enum EventFilter: Sendable, Equatable {
    case all
    /// Not yet delivered to some endpoint, including those waiting for a retry.
    case pending
    /// Dead-lettered on some endpoint.
    case failed
}

/// Which events `events replay` sends again.
public enum ReplaySelection: Sendable, Equatable {
    case id(String)
    case since(Int64)
}
