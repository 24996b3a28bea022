import AppStoreBackends
import AppStoreSimulator
import Foundation
import Logging
import StatusPolling

/// The demo's answers to Apple's refund requests (with notifications and the Server API), given
/// as `notifications serve` gives them: the web service records consent for a seeded share of the
/// customers at enrolment, and after each day's notifications (and the night's catch-up) the sender
/// passes a second after each request was stored, at that simulated instant.
struct ConsumptionPlay: Sendable {
    /// The customers who consented to share consumption data.
    static let consentShare = 0.8
    /// The demo team's policy: trials are offered; a request 14 days or more into the period is declined.
    static let policy = ConsumptionPolicy(sampleContentProvided: true, rules: [RefundPreferenceRule(prefer: .decline, minDaysSincePeriodStart: 14)])

    let store: any PollingStore
    let simulator: AppStoreSimulator
    let sender: ConsumptionSender
    let clock: NotificationPlay.Clock

    init(store: any PollingStore, simulator: AppStoreSimulator, client: ServerAPIClient, logger: Logger) {
        let clock = NotificationPlay.Clock(simulator.nowMs)
        self.store = store
        self.simulator = simulator
        self.clock = clock
        sender = ConsumptionSender(ledger: store, client: client, policy: Self.policy, logger: logger, now: { clock.now })
    }

    /// The web service's consent, written at enrolment for a seeded share of the customers.
    static func recordConsents(_ population: Population, store: any PollingStore, atMs: Int64) async throws {
        for subscriber in population.subscribers {
            var draw = SeededRandom(seed: population.configuration.seed ^ 0xC025_E27, UInt64(subscriber.index))
            if draw.chance(consentShare) {
                try await store.recordConsumptionConsent(userID: subscriber.userID, consented: true, lastUsedAtMs: nil, nowMs: atMs)
            }
        }
    }

    /// Answers every request stored through `ms`: a pass a second after the earliest one due,
    /// until none is left before `ms`.
    func answer(through ms: Int64) async throws -> ConsumptionPass {
        var total = ConsumptionPass()
        while let due = try await store.consumptionRequests(ConsumptionQuery(states: [.pending], limit: 1_000_000)).map(\.nextAttemptAtMs).min(),
            due + 1000 <= ms
        {
            let at = max(due + 1000, simulator.nowMs)
            simulator.setClock(at)
            clock.set(at)
            total = total + (try await sender.sendDue())
        }
        return total
    }
}
