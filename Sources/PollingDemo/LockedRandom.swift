import AppStoreSimulator
import Synchronization

/// A seeded generator shared by concurrent retries.
final class LockedRandom: Sendable {
    private let state: Mutex<SeededRandom>
    init(seed: UInt64) { state = Mutex(SeededRandom(seed: seed ^ 0x1177)) }
    func next() -> Double { state.withLock { Double.random(in: 0..<1, using: &$0) } }
}
