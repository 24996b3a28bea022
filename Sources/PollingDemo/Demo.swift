import AppStoreBackends
import AppStoreSimulator
import EntitlementCore
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
        /// With notifications: the simulator's tries since the night before, and the requests of
        /// the run's catch-up from Apple's history (V2).
        public var notifications = NotificationPusher.Statistics()
        public var catchUpRequests = 0
        /// Requests to Apple: the poll's and the catch-up's.
        public var appleRequests: Int { report.requests + catchUpRequests }
    }

    /// The whole demo.
    public struct Outcome: Sendable {
        public var nights: [Night]
        /// Resubscriptions outside the app during the nights, and when their rows showed them.
        public var comebacks: ComebackWatch
        /// Rows by entitlement state at the final night's clock.
        public var states: [EntitlementState: Int]
        public var simulator: SimulatorStatistics
        /// How long the App Store's events took to reach their rows.
        public var lag: EntitlementLag
        /// With `--events`: what the endpoint received against what the outbox holds.
        public var events: EventFeed.Summary?
        public var eventsDownNight: Int?
        /// With notifications and the Server API: the refund requests and their answers.
        public var consumption: ConsumptionSummary?
        /// The ledger against the App Store after the last night.
        public var ledger = LedgerTruthCheck()
        public var disagreements: [TruthCheck.Disagreement] { nights.flatMap(\.check.disagreements) }
        public var final: TruthCheck { nights.last!.check }
        /// Whether the demo passed: every row agreed after every night, and after the last one no
        /// row that differs from the App Store is left unwatched.
        public var passed: Bool { disagreements.isEmpty && final.unwatched.isEmpty && ledger.disagreements.isEmpty && events?.passed ?? true }
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

        return try await withEvents(configuration, store: store, logger: logger) { events in
            try await SimulatorServer.withRunning(simulator) { endpoints in
                try await withSource(configuration, simulator: simulator, endpoints: endpoints) { makeSource, makeServerAPI in
                    guard configuration.notifications else {
                        return try await playNights(
                            configuration, population: population, simulator: simulator, store: store, database: database, logger: logger, workers: workers,
                            endpoints: endpoints, makeSource: makeSource, makeServerAPI: nil, notifications: nil, enrolledAt: enrolledAt, idByUser: idByUser,
                            progress: progress, events: events)
                    }
                    simulator.setClock(enrolledAt)
                    // With the Server API, Apple's refund requests are answered as the receiver answers them.
                    let consumption = makeServerAPI.map { ConsumptionPlay(store: store, simulator: simulator, client: $0(), logger: logger) }
                    if consumption != nil { try await ConsumptionPlay.recordConsents(population, store: store, atMs: enrolledAt) }
                    return try await NotificationPlay.withRunning(configuration, simulator: simulator, inbox: store, fromMs: enrolledAt, logger: logger) { play in
                        var outcome = try await playNights(
                            configuration, population: population, simulator: simulator, store: store, database: database, logger: logger, workers: workers,
                            endpoints: endpoints, makeSource: makeSource, makeServerAPI: makeServerAPI, notifications: play, consumption: consumption,
                            enrolledAt: enrolledAt, idByUser: idByUser, progress: progress, events: events)
                        if consumption != nil {
                            outcome.consumption = ConsumptionSummary(
                                try await store.consumptionRequests(ConsumptionQuery(limit: 1_000_000)), answers: simulator.consumptionAnswers)
                        }
                        return outcome
                    }
                }
            }
        }
    }

    /// Runs `body` with the event feed when the demo plays `--events`, else with nil.
    static func withEvents<T: Sendable>(
        _ configuration: DemoConfiguration, store: any PollingStore, logger: Logger, _ body: (EventFeed?) async throws -> T
    ) async throws -> T {
        guard configuration.events else { return try await body(nil) }
        return try await EventFeed.withRunning(configuration, store: store, logger: logger) { feed in try await body(feed) }
    }

    /// The nights themselves: the day's notifications (when on), uploads, the run (its catch-up
    /// first), and the check against the truth.
    private static func playNights(
        _ configuration: DemoConfiguration, population: Population, simulator: AppStoreSimulator, store: any PollingStore,
        database: any PollingDatabase, logger: Logger, workers: (any NightWorkers)?, endpoints: SimulatorServer.Endpoints,
        makeSource: () throws -> any SubscriptionStatusSource, makeServerAPI: (() -> ServerAPIClient)?, notifications: NotificationPlay?,
        consumption: ConsumptionPlay? = nil, enrolledAt: Int64, idByUser: [String: Int64], progress: @Sendable (Night) -> Void, events: EventFeed?
    ) async throws -> Outcome {
        let firstNight = configuration.clock(night: 1)
        var nights: [Night] = []
        var comebacks = ComebackWatch()
        var lag = EntitlementLag()
        var before = try await TruthCheck.run(store: store, population: population, clockMs: firstNight, before: [:]).1
        var previousClock = enrolledAt
        for number in 1...(configuration.nights + 1) {
            let clock = configuration.clock(night: number)
            let faulty = number <= configuration.nights
            if !faulty { simulator.setFaults(FaultConfiguration(latency: configuration.latency)) }
            comebacks.note(population, rows: before, after: previousClock, through: clock)
            lag.happened(population.lifecycleEvents(after: previousClock, through: clock))
            var delivered = NotificationPusher.Statistics()
            var catchUpRequests = 0
            var windows = configuration.windows
            if let notifications {
                delivered = await notifications.deliver(through: clock)
                try await reflectNotifications(store, since: previousClock, into: &lag)
                // The day's refund requests answered as the receiver answers them; one only the
                // night's catch-up brought is taken by the next day's passes.
                _ = try await consumption?.answer(through: clock)
            }
            let uploads = try await uploadReceipts(population, idByUser, store, after: previousClock, through: clock)
            simulator.setClock(clock)
            if let notifications, let makeServerAPI {
                (catchUpRequests, windows.coveredFrom) = await notifications.catchUp(makeServerAPI(), inbox: store, nowMs: clock, logger: logger)
                try await reflectNotifications(store, since: clock, into: &lag)
            }
            let run: NightRun
            if let workers {
                run = try await workers.play(NightRequest(number: number, clockMs: clock, configuration: configuration, endpoints: endpoints, simulator: simulator))
            } else {
                let job = PollJob(
                    configuration: .init(
                        selection: .nightly(windows), bundleID: population.configuration.bundleID, nowMs: clock,
                        concurrency: configuration.concurrency, recordedOptions: ["demo_night": String(number)],
                        handlesSignals: false, showsProgress: false),
                    database: database, source: try makeSource(), logger: logger)
                let outcome = await job.run()
                guard let report = outcome.report else { throw DemoError.nightDidNotRun(number, outcome.error ?? "exit \(outcome.exitCode.rawValue)") }
                run = NightRun(report: report, exitCode: outcome.exitCode)
            }
            let notified = notifications.map { _ in
                TruthCheck.Notified(awaitingApple: awaitingApple(simulator, clockMs: clock, version1: configuration.backend == .verifyReceipt))
            }
            let (check, after) = try await TruthCheck.run(
                store: store, population: population, clockMs: clock, before: before, receiptsFromBackend: configuration.backend == .verifyReceipt,
                windows: configuration.windows, notified: notified)
            for chain in check.verifiedChains { lag.reflected(chain, asOfMs: clock, atMs: clock) }
            try await events?.deliver(night: number, clockMs: clock)
            comebacks.look(at: after, clockMs: clock)
            var night = Night(
                number: number, clockMs: clock, faulty: faulty, uploads: uploads, report: run.report, exitCode: run.exitCode, check: check,
                workers: run.workers)
            night.notifications = delivered
            night.catchUpRequests = catchUpRequests
            progress(night)
            nights.append(night)
            before = after
            previousClock = clock
        }
        var states: [EntitlementState: Int] = [:]
        for state in before.values { states[state.entitlement(at: configuration.finalNightMs), default: 0] += 1 }
        var outcome = Outcome(nights: nights, comebacks: comebacks, states: states, simulator: simulator.statistics, lag: lag)
        // The simulator's population as it stands: an answered refund request may have turned Apple's refund into a decline.
        outcome.ledger = try await LedgerTruthCheck.run(store: store, population: simulator.population)
        if let events {
            try await events.drain(fromMs: configuration.finalNightMs)
            outcome.events = try await events.summary()
            outcome.eventsDownNight = configuration.eventsDownNight
        }
        return outcome
    }

    /// The notifications the store recorded since `sinceMs`: each brought its row Apple's data as
    /// of its instant, when it was received (a stale or duplicate one: earlier still).
    static func reflectNotifications(_ store: any SubscriberDirectory, since sinceMs: Int64, into lag: inout EntitlementLag) async throws {
        let reached: Set<String> = ["applied", "unchanged", "duplicate", "stale"]
        // The store lists newest first; each must count at its own arrival.
        for notification in try await store.notifications(NotificationQuery(sinceMs: sinceMs, limit: 1_000_000)).reversed() {
            guard reached.contains(notification.outcome), let chain = notification.originalTransactionID else { continue }
            lag.reflected(chain, asOfMs: notification.appleStateAtMs, atMs: notification.receivedAtMs)
        }
    }

    /// Chains whose row may rightly hold older data tonight: Apple has not tried to send the
    /// notification of an event before tonight's clock yet (a delivery late by minutes: neither the
    /// receiver nor the history has it, and a row out of every window is not asked); with V1, also
    /// a notification not delivered (V1 has no history to catch up from), or a renewal preference
    /// changed since the chain's last charge (V1's DID_CHANGE_RENEWAL_PREF carries no date, so it
    /// cannot be placed after the last poll; the poll of the row's next window brings it), or a
    /// refund of the current period that Apple reversed (V1 has no `REFUND_REVERSED`: the poll
    /// when the period ends brings the access back).
    static func awaitingApple(_ simulator: AppStoreSimulator, clockMs: Int64, version1: Bool = false) -> Set<String> {
        var chains = Set<String>()
        if version1 {
            for subscriber in simulator.population.subscribers {
                for chain in subscriber.chains where chain.transactions.contains(where: { t in
                    t.refundRequestedAtMs == nil && !chain.isFamilyShared && (t.refundReversedAtMs ?? .max) <= clockMs && clockMs < t.expiresMs
                }) {
                    chains.insert(chain.originalTransactionID)
                }
            }
        }
        for record in simulator.notificationRecords {
            guard let event = record.event, event.atMs <= clockMs else { continue }
            if record.firstAttemptMs > clockMs { chains.insert(event.originalTransactionID) }
            guard record.version == 1 else { continue }
            if !record.delivered { chains.insert(event.originalTransactionID) }
            guard event.kind == .downgraded else { continue }
            let chain = simulator.population.subscribers[event.subscriberIndex].chains.first { $0.originalTransactionID == event.originalTransactionID }
            if chain?.transactions.contains(where: { $0.purchaseMs > event.atMs && $0.purchaseMs <= clockMs }) != true { chains.insert(event.originalTransactionID) }
        }
        return chains
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
