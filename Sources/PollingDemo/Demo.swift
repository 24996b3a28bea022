import AppStoreSimulator
import Foundation
import Logging
import StatusPolling

/// `status-poller demo`: a fresh database, a simulated population enrolled through the database
/// contract, the simulator on a loopback port, and the nightly job played night after night — the
/// same `PollJob` cron runs, with its lock and run history — each night checked against the
/// simulator's truth.
public enum Demo {
    /// One night: what the run did and what the check found.
    public struct Night: Sendable {
        public var number: Int
        public var clockMs: Int64
        public var faulty: Bool
        public var uploads: Int
        public var report: RunReport
        public var exitCode: RunExitCode
        public var check: TruthCheck
        /// With worker processes, each one's report (their sum is `report`); empty in process.
        public var workers: [NightRun.Worker]
    }

    /// The whole demo.
    public struct Outcome: Sendable {
        public var nights: [Night]
        /// Resubscriptions outside the app during the nights, and when their rows showed them.
        public var comebacks: ComebackWatch
        /// Rows by entitlement state at the final night's clock.
        public var states: [EntitlementState: Int]
        public var simulator: SimulatorStatistics
        public var disagreements: [TruthCheck.Disagreement] { nights.flatMap(\.check.disagreements) }
        public var final: TruthCheck { nights.last!.check }
        /// Whether the demo passed: every row agreed after every night, and after the last one no
        /// row that differs from the App Store is left unwatched.
        public var passed: Bool { disagreements.isEmpty && final.unwatched.isEmpty }
    }

    /// Plays the demo; `progress` receives each night as it ends. With `workers`, they play each
    /// night's run; else the night's ``PollJob`` runs in this process.
    public static func play(
        _ configuration: DemoConfiguration, database demo: DemoDatabase, logger: Logger, workers: (any NightWorkers)? = nil,
        progress: @Sendable (Night) -> Void = { _ in }
    ) async throws -> Outcome {
        let firstNight = configuration.clock(night: 1)
        let population = Population(try PopulationConfiguration(
            subscribers: configuration.subscribers, seed: configuration.seed, startMs: firstNight,
            horizonMs: configuration.finalNightMs + 90 * DemoConfiguration.dayMs, gracePeriodDays: configuration.gracePeriodDays
        ).applying(rates: configuration.rates))
        var faults = FaultConfiguration.spread(total: configuration.faultRate, latency: configuration.latency, slowAnswerDelay: configuration.requestTimeout * 1.5,
            excluding: configuration.slowAnswers ? [] : [.slowAnswer])
        if let outage = configuration.outageNight {
            let at = configuration.clock(night: outage)
            faults.outages = [(at - 3_600_000)...(at + 3_600_000)]
        }
        let simulator = AppStoreSimulator(population: population, faults: faults, clockMs: firstNight)

        let database = demo.database
        guard await demo.isReplaceable() else { throw DemoError.databaseHoldsOtherData(database.name) }
        let store = try await demo.recreate()
        do {
            let outcome = try await play(
                configuration, population: population, simulator: simulator, store: store, database: database, logger: logger, workers: workers, progress: progress)
            try? await store.close()
            return outcome
        } catch {
            try? await store.close()
            throw error
        }
    }

    static func play(
        _ configuration: DemoConfiguration, population: Population, simulator: AppStoreSimulator, store: any PollingStore,
        database: any PollingDatabase, logger: Logger, workers: (any NightWorkers)?, progress: @Sendable (Night) -> Void
    ) async throws -> Outcome {
        let firstNight = configuration.clock(night: 1)
        // The web service's enrolment: a user id and the receipt the app uploaded, nothing else.
        let enrolledAt = firstNight - 3_600_000
        let ids = try await store.enroll(simulator.enrolment(at: enrolledAt))
        let idByUser = Dictionary(uniqueKeysWithValues: zip(population.subscribers.map(\.userID), ids))

        return try await SimulatorServer.withRunning(simulator) { endpoints in
            try await withSource(configuration, simulator: simulator, endpoints: endpoints) { makeSource in
                var nights: [Night] = []
                var comebacks = ComebackWatch()
                var before = try await TruthCheck.run(store: store, population: population, clockMs: firstNight, before: [:]).1
                var previousClock = enrolledAt
                for number in 1...(configuration.nights + 1) {
                    let clock = configuration.clock(night: number)
                    let faulty = number <= configuration.nights
                    if !faulty { simulator.setFaults(FaultConfiguration(latency: configuration.latency)) }
                    comebacks.note(population, rows: before, after: previousClock, through: clock)
                    let uploads = try await uploadReceipts(population, idByUser, store, after: previousClock, through: clock)
                    simulator.setClock(clock)
                    let run: NightRun
                    if let workers {
                        run = try await workers.play(NightRequest(number: number, clockMs: clock, configuration: configuration, endpoints: endpoints, simulator: simulator))
                    } else {
                        let job = PollJob(
                            configuration: .init(
                                selection: .nightly(configuration.windows), bundleID: population.configuration.bundleID, nowMs: clock,
                                concurrency: configuration.concurrency, recordedOptions: ["demo_night": String(number)],
                                handlesSignals: false, showsProgress: false),
                            database: database, source: try makeSource(), logger: logger)
                        let outcome = await job.run()
                        guard let report = outcome.report else { throw DemoError.nightDidNotRun(number, outcome.error ?? "exit \(outcome.exitCode.rawValue)") }
                        run = NightRun(report: report, exitCode: outcome.exitCode)
                    }
                    let (check, after) = try await TruthCheck.run(
                        store: store, population: population, clockMs: clock, before: before, receiptsFromBackend: configuration.backend == .verifyReceipt,
                        windows: configuration.windows)
                    comebacks.look(at: after, clockMs: clock)
                    let night = Night(
                        number: number, clockMs: clock, faulty: faulty, uploads: uploads, report: run.report, exitCode: run.exitCode, check: check,
                        workers: run.workers)
                    progress(night)
                    nights.append(night)
                    before = after
                    previousClock = clock
                }
                var states: [EntitlementState: Int] = [:]
                for state in before.values { states[state.entitlement(at: configuration.finalNightMs), default: 0] += 1 }
                return Outcome(nights: nights, comebacks: comebacks, states: states, simulator: simulator.statistics)
            }
        }
    }

    /// The app uploads a new receipt when the user buys in it (a resubscription, an upgrade); the
    /// web service stores it, which makes the row due. Purchases in the App Store upload nothing.
    static func uploadReceipts(_ population: Population, _ ids: [String: Int64], _ store: any SubscriberDirectory, after: Int64, through: Int64) async throws -> Int {
        var uploads = 0
        for subscriber in population.subscribers {
            guard let last = subscriber.inAppPurchases(after: after, through: through).last, let id = ids[subscriber.userID] else { continue }
            try await store.uploadReceipt(subscriptionID: id, receipt: subscriber.receipt(at: last))
            uploads += 1
        }
        return uploads
    }

    /// Backoff jitter from the demo's seed, so a demo replays the same way.
    static func seededJitter(_ seed: UInt64) -> @Sendable () -> Double {
        let random = LockedRandom(seed: seed)
        return { random.next() }
    }
}
