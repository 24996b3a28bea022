import AppStoreSimulator
import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The simulator lets an answer weigh on its seeded refund decision: a `DECLINE` taken before Apple
/// decides turns about half the planned refunds into declines — the chain, its notifications and
/// the truth follow — while no preference, or an answer after the decision, changes nothing; the
/// truth keeps the decision before and after.
@Suite struct SimulatedConsumptionDecisionTests {
    typealias Fixture = SupportFixture
    static let population = Population(PopulationConfiguration(
        subscribers: 120, seed: 39, startMs: Fixture.start, horizonMs: Fixture.start + 200 * Fixture.day, earlierRefundRate: 0.2, refundReversedRate: 0))

    static let decline = #"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"DECLINE","sampleContentProvided":false}"#
    static let silent = #"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#

    @Test func aDeclinePreferenceTurnsAboutHalfThePlannedRefundsIntoDeclines() async throws {
        try await Fixture.with(.sqlite, population: Self.population) { f in
            // Every production refund request with a refund to come, in the order asked.
            let requests = f.simulator.population.subscribers.filter { $0.environment == "Production" }.flatMap { s in
                s.chains.flatMap { c in c.transactions.compactMap { t in t.refundRequestedAtMs != nil && t.refundedAtMs != nil ? (c, t) : nil } }
            }.sorted { $0.1.refundRequestedAtMs! < $1.1.refundRequestedAtMs! }
            #expect(requests.count >= 10)
            var outcomes: [String: String] = [:]
            for (index, (chain, t)) in requests.enumerated() {
                // Answered between the request and Apple's decision; every fourth without a preference.
                f.simulator.setClock(t.refundRequestedAtMs! + 60_000)
                let body = index % 4 == 3 ? Self.silent : Self.decline
                #expect(try await f.client.sendConsumptionInformation(transactionID: t.transactionID, body: body, in: .production, logger: f.logger) == .accepted(httpStatus: 202))
                let truth = try #require(f.simulator.consumptionAnswers.last)
                #expect(truth.plannedDecision == "refunded")
                outcomes[t.transactionID] = truth.decision
                let after = try #require(f.simulator.population.transaction(id: t.transactionID)?.transaction)
                if truth.decision == "declined" {
                    #expect(body == Self.decline)
                    #expect(after.refundedAtMs == nil && after.refundDeclinedAtMs == t.refundedAtMs)
                    let kinds = f.simulator.population.lifecycleEvents(after: t.refundRequestedAtMs!, through: t.refundedAtMs!)
                        .filter { $0.originalTransactionID == chain.originalTransactionID }.map(\.kind)
                    #expect(kinds.contains(.refundDeclined) && !kinds.contains(.refunded) && !kinds.contains(.refundedEarlierPeriod))
                } else {
                    #expect(truth.decision == "refunded")
                    #expect(after.refundedAtMs == t.refundedAtMs)
                }
            }
            let silent = requests.indices.filter { $0 % 4 == 3 }.map { requests[$0].1.transactionID }
            #expect(silent.allSatisfy { outcomes[$0] == "refunded" })
            let declined = outcomes.values.filter { $0 == "declined" }.count
            let weighed = requests.count - silent.count
            #expect(declined > 0 && declined < weighed, "\(declined) of \(weighed)")

            // After Apple decided, an answer changes nothing.
            let (_, late) = requests[0]
            let before = f.simulator.population.transaction(id: late.transactionID)?.transaction.refundDeclinedAtMs
            f.simulator.setClock(late.refundedAtMs! + 60_000)
            _ = try await f.client.sendConsumptionInformation(transactionID: late.transactionID, body: Self.decline, in: .production, logger: f.logger)
            #expect(f.simulator.population.transaction(id: late.transactionID)?.transaction.refundDeclinedAtMs == before)
        }
    }
}
