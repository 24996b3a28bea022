import Synchronization

/// Where the take's walk of an endpoint's pending deliveries starts: the lowest pending delivery
/// the last take found. A delivery's update to `delivered` leaves its entry in the indexes until
/// vacuum, and a walk from the start stepped over every delivered row first — 9 ms a take (of 15 ms
/// at most) behind 15,000 delivered rows, the drain rate falling as they piled up. The lowest
/// pending delivery only rises: fan-outs add later events, and a retry or a lease keeps its row
/// pending. Only `events replay` makes an earlier one pending again: through this store it
/// forgets the floors (``forget()``); from another process the floor is trusted for ``lifetime``,
/// and then the walk starts from the beginning once.
final class PendingFloor: Sendable {
    static let lifetime: Duration = .seconds(5)

    private let floors = Mutex<[String: (event: Int64, at: ContinuousClock.Instant)]>([:])

    /// The event the walk of `endpoint` may start from (0: from the beginning).
    func event(for endpoint: String, now: ContinuousClock.Instant = .now) -> Int64 {
        floors.withLock { floors in
            guard let floor = floors[endpoint], now - floor.at < Self.lifetime else { return 0 }
            return floor.event
        }
    }

    /// Records the lowest pending delivery a take found, walking from `from` at `now`: a walk
    /// from the beginning starts a new lifetime; one from the floor keeps the floor's, unless the
    /// floor was forgotten meanwhile (a replay: then the next walk starts from the beginning).
    func record(_ lowest: Int64, for endpoint: String, walkedFrom from: Int64, now: ContinuousClock.Instant = .now) {
        floors.withLock { floors in
            if from == 0 {
                floors[endpoint] = (lowest, now)
            } else if let floor = floors[endpoint] {
                floors[endpoint] = (lowest, floor.at)
            }
        }
    }

    /// Walks start from the beginning again (a replay made earlier deliveries pending).
    func forget() {
        floors.withLock { $0.removeAll() }
    }
}
