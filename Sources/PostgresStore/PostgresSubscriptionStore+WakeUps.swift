import Logging
import PostgresNIO
import StatusPolling

/// The deliverer's wake-ups on PostgreSQL: one connection of the pool `LISTEN`s on the outbox's
/// channel (``OutboxSQL/channel``), which every transaction that wrote events notifies at its commit.
extension PostgresSubscriptionStore {
    public func ringOnNewEvents(_ bell: Doorbell) async throws {
        while !Task.isCancelled {
            do {
                try await connector.withConnection { connection in
                    try await connection.listen(on: OutboxSQL.channel) { notifications in
                        bell.ring()
                        for try await _ in notifications { bell.ring() }
                    }
                }
            } catch {
                // Cancelled: the deliverer is stopping, which is no failure.
                if Task.isCancelled { return }
                logger.warning("lost the listening connection for new events; listening again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
