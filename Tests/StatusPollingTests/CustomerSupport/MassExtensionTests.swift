import AppStoreSimulator
import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// `extend --all` and `extend status` on every store against the simulator: the request is in the
/// database before Apple hears it, a request killed before Apple's answer is sent again by its id
/// (Apple takes it once), its status is followed until complete, and the notifications Apple sends
/// for it bring every extended row to the truth.
@Suite struct MassExtensionTests {
    typealias Fixture = SupportFixture

    @Test(arguments: StoreKind.available) func aMassExtensionIsRecordedResumedFollowedAndNotified(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let t = Fixture.start + Fixture.day
            f.simulator.setClock(t)
            f.simulator.sendNotifications(version: 2)
            let id = "efb27071-45a4-4aca-9854-2a1e9146f265"
            let request = MassExtensionRequest(
                requestIdentifier: id, productID: "premium.monthly", days: 7, reasonCode: 3, storefrontCountryCodes: ["USA", "CAN"], environment: "Production",
                requestedAtMs: t)
            // Killed after recording, before Apple's answer: the record holds it, not yet accepted.
            let recorded = try await f.db.store.recordMassExtension(request)
            #expect(recorded == request)
            #expect(f.simulator.statistics.serverAPIRequests["inApps/v1/subscriptions/extend/mass"] == nil)
            // Run again with the same id: sent, and taken.
            guard case .taken(let taken) = try await f.desk.requestMassExtension(request, client: f.client, nowMs: t + 1000, logger: f.logger) else {
                Issue.record("not taken")
                return
            }
            #expect(taken.acceptedAtMs == t + 1000)
            #expect(taken.requestedAtMs == t)
            // Once more: Apple took it already, nothing is sent.
            guard case .alreadyTaken = try await f.desk.requestMassExtension(request, client: f.client, nowMs: t + 2000, logger: f.logger) else {
                Issue.record("sent twice")
                return
            }
            #expect(f.simulator.statistics.serverAPIRequests["inApps/v1/subscriptions/extend/mass"] == 1)
            // The same id with other terms is refused here.
            var other = request
            other.days = 8
            guard case .conflicting = try await f.desk.requestMassExtension(other, client: f.client, nowMs: t + 3000, logger: f.logger) else {
                Issue.record("conflicting terms accepted")
                return
            }

            // In progress until the App Store is done, minutes later.
            let early = try await f.desk.followMassExtensions(client: f.client, nowMs: t + 60_000, logger: f.logger)
            #expect(early.map(\.checkedAtMs) == [t + 60_000])
            #expect(early.map(\.completedAtMs) == [nil])
            let done = t + 11 * Fixture.minute
            let before = f.simulator.population
            f.simulator.setClock(done)
            let after = f.simulator.population
            var expected: [String: Int64] = [:]  // extended chain → its new expiry
            for s in after.subscribers {
                for chain in s.chains where chain.extensions.contains(where: { $0.requestIdentifier == id }) {
                    expected[chain.originalTransactionID] = chain.extensions.last!.effectiveDateMs
                }
            }
            #expect(!expected.isEmpty)
            let followed = try await f.desk.followMassExtensions(client: f.client, nowMs: done, logger: f.logger)
            let final = try #require(followed.first)
            #expect(final.completedAtMs == t + AppStoreSimulator.massExtensionDurationMs)
            #expect(final.succeeded == Int64(expected.count))
            let failed = before.subscribers.flatMap { s in s.chains.filter { c in
                guard let current = c.current(at: t + AppStoreSimulator.massExtensionDurationMs), current.productID == "premium.monthly",
                    current.expiresMs > t + AppStoreSimulator.massExtensionDurationMs, current.refund(at: t + AppStoreSimulator.massExtensionDurationMs) == nil else { return false }
                return s.environment == "Production" && expected[c.originalTransactionID] == nil
                    && c.billingRetries.allSatisfy { !($0.startMs <= t + AppStoreSimulator.massExtensionDurationMs && t + AppStoreSimulator.massExtensionDurationMs < $0.endMs) }
            } }
            #expect(final.failed == Int64(failed.count))
            // Asked no more once complete.
            let statusRequests = f.simulator.statistics.serverAPIRequests["inApps/v1/subscriptions/extend/mass/status"]
            _ = try await f.desk.followMassExtensions(client: f.client, nowMs: done + 1, logger: f.logger)
            #expect(f.simulator.statistics.serverAPIRequests["inApps/v1/subscriptions/extend/mass/status"] == statusRequests)

            // Apple's notifications (RENEWAL_EXTENDED for each, RENEWAL_EXTENSION/SUMMARY at the end) through the receiver.
            var quiet = Logger(label: "mass")
            quiet.logLevel = .critical
            let configuration = f.simulator.population.configuration
            let receiver = NotificationReceiver(
                .init(bundleID: configuration.bundleID, appAppleID: configuration.appAppleID, trustedRoots: [f.simulator.pki.root]), inbox: f.db.store, logger: quiet,
                clock: { done })
            var types: [String: Int] = [:]
            while let attempt = f.simulator.nextNotificationAttempt(through: done) {
                let reply = await receiver.receive(Array(attempt.body))
                if case .accepted(_, _, let type) = reply { types[type, default: 0] += 1 }
                f.simulator.recordNotificationAttempt(attempt, result: .success)
            }
            #expect(types["RENEWAL_EXTENDED"] == expected.count)
            #expect(types["RENEWAL_EXTENSION"] == failed.count + 1)
            for (chain, expiry) in expected {
                let row = try await f.row(owning: chain)
                #expect(row.state.expiresAt == expiry, "\(chain)")
            }
            let summary = try await f.db.store.notifications(NotificationQuery(limit: 1000)).filter { $0.name == "RENEWAL_EXTENSION/SUMMARY" }
            #expect(summary.count == 1)
        }
    }
}
