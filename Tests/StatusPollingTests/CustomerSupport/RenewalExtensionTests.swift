import AppStoreSimulator
import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// `extend` on every store against the simulator: Apple's extension reaches the row through the
/// one apply path (audit row `extended`), Apple's refusals come back by their codes, and the row
/// equals the truth after the next night.
@Suite struct RenewalExtensionTests {
    typealias Fixture = SupportFixture

    static let population = Population(PopulationConfiguration(
        subscribers: 60, seed: 40, startMs: Fixture.start, horizonMs: Fixture.start + 200 * Fixture.day, familySharedShare: 0.2))

    static func terms(_ days: Int, _ id: String) -> RenewalExtensionRequest {
        RenewalExtensionRequest(days: days, reason: .serviceIssueOrOutage, requestIdentifier: id)
    }

    @Test(arguments: StoreKind.available) func anExtensionReachesTheRowThroughTheApplyPathAndAgreesWithTheTruth(kind: StoreKind) async throws {
        try await Fixture.with(kind, population: Self.population) { f in
            let t = Fixture.start + Fixture.day
            f.simulator.setClock(t)
            let (subscriber, chain) = try #require(f.activePaid(at: t))
            let current = try #require(chain.current(at: t))
            let row = try await f.row(owning: chain.originalTransactionID)
            #expect(row.state.expiresAt == current.expiresMs)

            let outcome = try await f.client.extendRenewalDate(originalTransactionID: chain.originalTransactionID, Self.terms(10, "req-1"), in: .production, logger: f.logger)
            #expect(outcome == .extended(effectiveDateMs: current.expiresMs + 10 * Fixture.day, webOrderLineItemID: "9\(current.transactionID)", environment: .production))
            let applied = try await f.desk.applyExtension(to: row, source: f.client, requestIdentifier: "req-1", nowMs: t, logger: f.logger)
            #expect(applied == .written(transition: .extended, expiresAtMs: current.expiresMs + 10 * Fixture.day))

            let after = try await f.row(owning: chain.originalTransactionID)
            let truth = try #require(f.simulator.population.subscriber(userID: subscriber.userID)?.entitlement(originalTransactionID: chain.originalTransactionID, at: t))
            #expect(after.state.expiresAt == truth.expiresAtMs)
            #expect(after.state.transactionID == current.transactionID)
            let event = try #require(try await f.db.store.history(userID: subscriber.userID).first { $0.subscriptionID == row.id })
            #expect(event.reason == "extended")
            #expect(event.source == "extended")
            #expect(event.old.expiresAt == current.expiresMs)
            #expect(event.new.expiresAt == current.expiresMs + 10 * Fixture.day)

            // The same request identifier again: Apple answers the same and extends nothing more.
            let again = try await f.client.extendRenewalDate(originalTransactionID: chain.originalTransactionID, Self.terms(10, "req-1"), in: .production, logger: f.logger)
            #expect(again == outcome)
            let truthAgain = f.simulator.population.subscriber(userID: subscriber.userID)?.entitlement(originalTransactionID: chain.originalTransactionID, at: t)
            #expect(truthAgain?.expiresAtMs == current.expiresMs + 10 * Fixture.day)

            // The nights after (past the old expiry, then past the new one): the row equals the truth.
            for night in [current.expiresMs + Fixture.day, current.expiresMs + 10 * Fixture.day + Fixture.day / 2] {
                let report = try #require(await f.night(at: night))
                #expect(report.failed == 0)
                let extended = try await f.row(owning: chain.originalTransactionID)
                let truth = f.simulator.population.subscriber(userID: subscriber.userID)?.entitlement(originalTransactionID: chain.originalTransactionID, at: night)
                #expect(extended.state.expiresAt == truth?.expiresAtMs, "night \(night)")
                #expect(extended.state.transactionID == truth?.transactionID, "night \(night)")
            }
        }
    }

    @Test(arguments: StoreKind.available) func applesRefusalsComeBackByTheirCodesAndChangeNoRow(kind: StoreKind) async throws {
        try await Fixture.with(kind, population: Self.population) { f in
            let t = Fixture.start + Fixture.day
            f.simulator.setClock(t)
            let (_, chain) = try #require(f.activePaid(at: t))
            let id = chain.originalTransactionID
            func extend(_ id: String, _ days: Int, _ request: String) async throws -> RenewalExtensionOutcome {
                try await f.client.extendRenewalDate(originalTransactionID: id, Self.terms(days, request), in: .production, logger: f.logger)
            }
            // Twice in 365 days, then Apple's limit.
            guard case .extended = try await extend(id, 5, "a") else { Issue.record("first extension refused"); return }
            guard case .extended = try await extend(id, 5, "b") else { Issue.record("second extension refused"); return }
            let before = try await f.db.contractColumns(try await f.row(owning: id).id)
            #expect(try await extend(id, 5, "c") == .refused(.maximumReached, environment: .production))
            #expect(try await f.db.contractColumns(try await f.row(owning: id).id) == before)
            // More than 90 days.
            let (_, other) = try #require(f.activePaid(at: t, skipping: [id]))
            #expect(try await extend(other.originalTransactionID, 91, "d") == .refused(.invalidDays, environment: .production))
            // Not in an active paid period.
            let (_, expired) = try #require(f.subscriber { s, c in s.entitlement(originalTransactionID: c.originalTransactionID, at: t)?.state == "expired" })
            #expect(try await extend(expired.originalTransactionID, 5, "e") == .refused(.ineligible, environment: .production))
            // A Family Sharing member's.
            let (_, member) = try #require(f.subscriber { _, c in c.isFamilyShared && c.transactions[0].purchaseMs <= t })
            #expect(try await extend(member.originalTransactionID, 5, "f") == .refused(.familyShared, environment: .production))
            // An id Apple does not know.
            #expect(try await extend("999999999", 5, "g") == .refused(.unknownSubscription, environment: .production))
            #expect(f.simulator.statistics.serverAPIRequests["inApps/v1/subscriptions/extend"] == 7)
        }
    }
}
