import AppStoreSimulator
import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import PollingDemo
@testable import StatusPolling

/// A subscriber who lapses and resubscribes outside the app uploads no receipt: only the lapsed
/// sweep asks about the row again. Whole nights against the simulator, on every store.
@Suite struct LapsedComebackTests {
    static let start: Int64 = 1_780_000_000_000
    static let day: Int64 = 86_400_000

    /// Every subscriber turns auto-renew off each period, lapses, and comes back 1 to 60 days
    /// later in the App Store (no upload), again and again.
    static let population: Population = {
        var configuration = PopulationConfiguration(
            subscribers: 20, seed: 9, startMs: start, horizonMs: start + 150 * day,
            yearlyShare: 0, proShare: 0, trialShare: 0, introOfferShare: 0, secondGroupShare: 0, sandboxShare: 0,
            churnRate: 1, billingFailureRate: 0, recoveryRate: 0, refundRate: 0, upgradeRate: 0, downgradeRate: 0, resubscribeRate: 1,
            resubscribeOutsideAppRate: 1)
        configuration.bundleID = AppleJSON.bundleID
        return Population(configuration)
    }()

    /// 100 nights: with the sweep, every comeback shows in its row within 7 days; without it, the
    /// comebacks long after a lapse are never seen.
    @Test(arguments: StoreKind.available) func aComebackOutsideTheAppIsFoundWithinAWeek(kind: StoreKind) async throws {
        let swept = try await Self.play(kind, sweep: LapsedSweep())
        #expect(swept.watch.comebacks.count >= 20)
        #expect(swept.watch.unseen.allSatisfy { swept.lastNight - $0.atMs < 7 * Self.day })
        #expect(swept.watch.lags.allSatisfy { $0 < 7 * Self.day }, "\(swept.watch.lags)")
        #expect(swept.latest.isEmpty, "comebacks older than a week unseen after some night: \(swept.latest)")
        #expect(swept.selectedLapsed > 0)
        let lags = swept.watch.lags
        #expect(swept.watch.lag(percentile: 100) == lags.last)
        #expect(swept.watch.lag(percentile: 50) == lags[(lags.count + 1) / 2 - 1])

        let unswept = try await Self.play(kind, sweep: nil)
        #expect(unswept.watch.comebacks.count == swept.watch.comebacks.count)
        #expect(unswept.selectedLapsed == 0)
        // Only the near-expiry window's 48 hours could see one; the rest stay locked out.
        #expect(unswept.watch.lags.allSatisfy { $0 < 2 * Self.day })
        #expect(unswept.watch.unseen.count >= swept.watch.comebacks.count - 2)
    }

    struct Played: Sendable {
        var watch: ComebackWatch
        /// Comebacks that some night found unseen a week or more after they were bought.
        var latest: [String]
        var selectedLapsed: Int
        var lastNight: Int64
    }

    static func play(_ kind: StoreKind, sweep: LapsedSweep?) async throws -> Played {
        try await withStore(kind) { db in
            let simulator = AppStoreSimulator(population: Self.population, clockMs: Self.start)
            let clock = Self.start + 3 * 3_600_000
            for (user, receipt) in simulator.enrolment(at: clock) { _ = try await db.insert(userID: user, receipt: receipt) }
            let enrolled = clock
            return try await SimulatorServer.withRunning(simulator) { endpoints in
                var configuration = VerifyReceiptTesting.configuration(endpoints.productionURL, endpoints.sandboxURL)
                configuration.sharedSecret = SharedSecret(Self.population.configuration.sharedSecret)
                return try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http) { client in
                    var logger = Logger(label: "nights")
                    logger.logLevel = .critical
                    var played = Played(watch: ComebackWatch(), latest: [], selectedLapsed: 0, lastNight: enrolled)
                    var rows = try await Self.states(db)
                    for night in 1...100 {
                        let clock = Self.start + Int64(night) * Self.day + 3 * 3_600_000
                        played.watch.note(Self.population, rows: rows, after: played.lastNight, through: clock)
                        simulator.setClock(clock)
                        let report = await PollRun(
                            configuration: .init(bundleID: AppleJSON.bundleID, nowMs: clock, selection: .nightly(SelectionWindows(lapsed: sweep))),
                            store: db.store, source: client, logger: logger
                        ).run()
                        #expect(report.failed == 0, "night \(night)")
                        played.selectedLapsed += report.selectedLapsed
                        rows = try await Self.states(db)
                        played.watch.look(at: rows, clockMs: clock)
                        played.latest += played.watch.unseen.filter { clock - $0.atMs >= 7 * Self.day }.map { "\($0.originalTransactionID) bought \($0.atMs), night \(night)" }
                        played.lastNight = clock
                    }
                    return played
                }
            }
        }
    }

    static func states(_ db: StoreUnderTest) async throws -> [Int64: SubscriptionState] {
        Dictionary(uniqueKeysWithValues: try await db.store.subscriptionsWithBookkeeping(after: 0, limit: 1000).map { ($0.0.id, $0.0.state) })
    }
}
