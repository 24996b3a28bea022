import Synchronization

/// A clock a test moves: the sender's `now`.
final class SettableClock: Sendable {
    private let value: Mutex<Int64>

    init(_ ms: Int64) { value = Mutex(ms) }

    var ms: Int64 { value.withLock { $0 } }

    func set(_ ms: Int64) { value.withLock { $0 = ms } }
}
