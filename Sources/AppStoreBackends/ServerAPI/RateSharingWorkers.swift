/// The workers that share one App Store Server API rate: a store that several workers use marks
/// each of them while it runs and counts them (PostgreSQL: a shared advisory lock per worker,
/// counted in `pg_locks`; the server drops it with the worker's connection, however it ends).
public protocol RateSharingWorkers: Sendable {
    /// Marks this process as one of the workers sharing the rate, until ``leave()``.
    func join() async throws
    /// How many workers share the rate now, this one included.
    func count() async throws -> Int
    /// Removes the mark; the others take up its share once their reads show it gone.
    func leave() async
}
