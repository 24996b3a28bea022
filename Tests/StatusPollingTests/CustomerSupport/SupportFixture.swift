import AppStoreSimulator
import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The support commands' world in a test: the simulator on loopback, a fresh store of either kind
/// holding its population (enrolled, then verified once through the App Store Server API at the
/// simulator's clock), and a Server API client that trusts the simulator's root.
struct SupportFixture {
    static let start: Int64 = 1_790_000_000_000
    static let day: Int64 = 86_400_000
    static let minute: Int64 = 60_000

    let simulator: AppStoreSimulator
    let endpoints: SimulatorServer.Endpoints
    let db: StoreUnderTest
    let client: ServerAPIClient
    let logger: Logger
    var desk: SupportDesk { SupportDesk(store: db.store, bundleID: simulator.population.configuration.bundleID) }
    var bundleID: String { simulator.population.configuration.bundleID }

    static func population(subscribers: Int = 60, seed: UInt64 = 40) -> Population {
        Population(PopulationConfiguration(subscribers: subscribers, seed: seed, startMs: start, horizonMs: start + 200 * day))
    }

    static func with(_ kind: StoreKind, population: Population = population(), _ body: (SupportFixture) async throws -> Void) async throws {
        let simulator = AppStoreSimulator(population: population)
        var logger = Logger(label: "support")
        logger.logLevel = .critical
        try await withStore(kind) { db in
            try await SimulatorServer.withRunning(simulator) { endpoints in
                let key = simulator.serverAPIKey
                let credentials = ServerAPICredentials(
                    issuerID: key.issuerID, keyID: key.keyID, key: try InAppPurchaseKey(pem: key.privateKeyPEM), bundleID: population.configuration.bundleID)
                let configuration = ServerAPIConfiguration(
                    productionURL: endpoints.serverAPIURL, sandboxURL: endpoints.serverAPISandboxURL, credentials: credentials,
                    appAppleID: population.configuration.appAppleID, trustedRoots: AppleRootCertificate.defaultRoots + [simulator.pki.root], ratePerSecond: 200,
                    requestTimeout: VerifyReceiptTesting.patientTimeout, retry: RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20)))
                try await ServerAPIClient.withClient(configuration) { client in
                    _ = try await db.store.enroll(simulator.enrolment(at: start))
                    let fixture = SupportFixture(simulator: simulator, endpoints: endpoints, db: db, client: client, logger: logger)
                    let report = try #require(await fixture.night(at: start))
                    #expect(report.failed == 0)
                    try await body(fixture)
                }
            }
        }
    }

    /// A nightly run at `ms` (the simulator's clock moved there first), every due row asked.
    @discardableResult
    func night(at ms: Int64) async -> RunReport? {
        simulator.setClock(ms)
        let job = PollJob.Configuration(
            selection: .nightly(SelectionWindows(freshWithin: nil)), bundleID: bundleID, nowMs: ms, concurrency: 8, handlesSignals: false, showsProgress: false)
        return await PollJob(configuration: job, database: db.database(), source: client, logger: logger).run().report
    }

    /// The first subscriber of `environment` matching `condition`, with its first chain that does.
    func subscriber(_ environment: String = "Production", where condition: (SimulatedSubscriber, SimulatedChain) -> Bool) -> (SimulatedSubscriber, SimulatedChain)? {
        for subscriber in simulator.population.subscribers where subscriber.environment == environment {
            if let chain = subscriber.chains.first(where: { condition(subscriber, $0) }) { return (subscriber, chain) }
        }
        return nil
    }

    /// A subscriber whose chain is in an active paid period at `ms` (no trial, no refund, no
    /// Family Sharing, no billing retry): one Apple extends.
    func activePaid(at ms: Int64, environment: String = "Production", skipping: Set<String> = []) -> (SimulatedSubscriber, SimulatedChain)? {
        subscriber(environment) { subscriber, chain in
            guard !skipping.contains(chain.originalTransactionID), !chain.isFamilyShared, let current = chain.current(at: ms), !current.isTrial,
                current.refund(at: ms) == nil, current.expiresMs > ms + Self.day,
                let truth = subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: ms)
            else { return false }
            return truth.state == "active"
        }
    }

    /// The row owning `originalTransactionID`.
    func row(owning originalTransactionID: String) async throws -> SubscriptionRow {
        let id = try #require(try await db.store.subscriptionID(owning: originalTransactionID))
        return try #require(try await db.store.subscriptions(ids: [id]).first)
    }
}
