import Foundation
import Synchronization

/// The lean stand-in's memory: Server API answers already signed, by environment and id, and
/// bearer tokens already verified, so a repeated request costs a dictionary look-up, not an
/// ECDSA signature or verification. Bounded: emptied when full.
final class LeanAnswerCache: Sendable {
    private struct State {
        var answers: [String: Data] = [:]
        /// Accepted tokens and their `exp` (seconds).
        var tokens: [String: Double] = [:]
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int = 500_000) { self.capacity = capacity }

    func answer(_ key: String, make: () -> Data) -> Data {
        if let cached = state.withLock({ $0.answers[key] }) { return cached }
        let made = make()
        state.withLock {
            if $0.answers.count >= capacity { $0.answers.removeAll(keepingCapacity: true) }
            $0.answers[key] = made
        }
        return made
    }

    /// Whether `token` was accepted before and has not expired by `now`.
    func knows(token: String, now: Date) -> Bool {
        state.withLock { ($0.tokens[token] ?? 0) > now.timeIntervalSince1970 }
    }

    func remember(token: String, expiresAt: Double) {
        state.withLock {
            if $0.tokens.count >= 64 { $0.tokens.removeAll(keepingCapacity: true) }
            $0.tokens[token] = expiresAt
        }
    }
}
