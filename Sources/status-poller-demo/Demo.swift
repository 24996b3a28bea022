import AppStoreSimulator
import ArgumentParser
import Foundation
import Logging
import PollerCommandLine
import PollingDemo
import StatusPolling

extension StatusPollerDemo {
    /// `status-poller-demo demo`: the README's "run the main job" command, with no network.
    struct DemoCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "demo",
            abstract: "Play the nightly run for weeks of simulated time against the built-in App Store simulator.",
            discussion: """
                Creates a fresh SQLite database, enrols simulated subscribers through the database contract, \
                starts the simulator on a free loopback port, and runs `run` once per simulated night with \
                injected faults, then once more without. After each night every row is compared with the \
                simulator's truth. Exits 0 when every row agreed after every night, 1 otherwise. With a \
                PostgreSQL --database, --workers N plays each night with N `status-poller run` processes \
                sharing the night (the status-poller beside this program, or --poller; the password reaches \
                them in PGPASSWORD).
                """)

        @Option(help: "The demo's SQLite file, or a PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE, the password from PGPASSWORD or ~/.pgpass); a previous demo database there is replaced.")
        var database = "status-poller-demo.sqlite"

        @Option(help: "Simulated subscribers.")
        var subscribers = 3000

        @Option(help: "Nights with faults; a fault-free night follows.")
        var nights = 45

        @Option(help: "Seed of the population and of the faults.")
        var seed: UInt64 = 42

        @Option(help: "Per-request probability of an injected fault (0…1).")
        var faultRate = 0.03

        @Option(help: "A night (1-based) on which the App Store is down for every request.")
        var outageNight: Int?

        @Option(help: "Receipts verified at once (with --workers, shared among them).")
        var concurrency = 32

        @Option(help: "verify-receipt, server-api (signed answers, verified against the simulator's test root) or auto.")
        var backend: BackendChoice = .verifyReceipt

        @Option(name: .customLong("rate"), help: "A lifecycle rate of the population, EVENT=RATE (repeatable), as `simulate --rate` takes it; e.g. resubscribe_outside_app=1 (default 0.5): no purchase after the first uploads a receipt.")
        var rates: [String] = []

        @Option(help: ArgumentHelp("Ask lapsed rows again until this many days after expiry, as `run --lapsed-within` (default: \(Limits.days(LapsedSweep.defaultWithin)))."))
        var lapsedWithin = Limits.days(LapsedSweep.defaultWithin)

        @Option(help: ArgumentHelp("Ask each lapsed row every this many days, as `run --lapsed-every`; 0 turns the sweep off (default: \(Limits.days(LapsedSweep.defaultEvery)))."))
        var lapsedEvery = Limits.days(LapsedSweep.defaultEvery)

        @Option(help: "Worker processes per night, 1…16: more than 1 needs a PostgreSQL --database; each is `status-poller run --worker-name demo-worker-K`.")
        var workers = 1

        @Option(help: "With --workers: the status-poller the workers run (default: the one beside status-poller-demo).")
        var poller: String?

        @Flag(help: "Play the nights twice, polling only and then with App Store Server Notifications (V1 with verify-receipt, V2 and the history catch-up with server-api and auto), and compare Apple requests per night and entitlement lag.")
        var notifications = false

        @Option(help: "With --notifications: nights FIRST-LAST (e.g. 10-12) through which the receiver is down; the runs catch up from Apple's history.")
        var receiverDown: String?

        @Flag(help: "Deliver the outbound events after each night to a loopback endpoint that checks every signature and fails 5 % of deliveries, and check that each arrived once, each user's in order (docs/EVENTS.md).")
        var events = false

        @Option(help: "With --events: the night through which the endpoint is down (default: the middle night).")
        var eventsDownNight: Int?

        @Option(help: "Log level on stderr.")
        var logLevel: Logger.Level = .error

        func validate() throws {
            guard (1...1_000_000).contains(subscribers) else { throw ValidationError("--subscribers must be between 1 and 1,000,000.") }
            guard (1...400).contains(nights) else { throw ValidationError("--nights must be between 1 and 400.") }
            guard (0...0.9).contains(faultRate) else { throw ValidationError("--fault-rate must be between 0 and 0.9.") }
            guard (1...512).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 512.") }
            if let outageNight, !(1...nights).contains(outageNight) { throw ValidationError("--outage-night must be one of the nights (1…\(nights)).") }
            guard (1...16).contains(workers) else { throw ValidationError("--workers must be between 1 and 16.") }
            if workers > 1, !Composition.isPostgres(database) {
                throw ValidationError("--workers \(workers) needs a PostgreSQL --database (postgres://USER@HOST:PORT/DATABASE): several workers share a night through PostgreSQL's leases; a SQLite file has one run at a time.")
            }
            if Composition.hasPassword(database) {
                throw ValidationError("--database carries a password, which other users of this host can read (ps). Give it in PGPASSWORD or ~/.pgpass (mode 600).")
            }
            do {
                _ = try PopulationConfiguration(startMs: 0).applying(rates: rates)
            } catch {
                throw ValidationError("\(error)")
            }
            if notifications, workers > 1 { throw ValidationError("--notifications plays the nights in this process: leave --workers at 1.") }
            if receiverDown != nil, !notifications { throw ValidationError("--receiver-down needs --notifications.") }
            if eventsDownNight != nil, !events { throw ValidationError("--events-down-night needs --events.") }
            if let eventsDownNight, !(1...nights).contains(eventsDownNight) { throw ValidationError("--events-down-night must be one of the nights (1…\(nights)).") }
            if let receiverDown, Self.nights(receiverDown, within: nights) == nil {
                throw ValidationError("--receiver-down takes nights FIRST-LAST within 1…\(nights), got '\(receiverDown)'.")
            }
            if poller != nil, workers < 2 { throw ValidationError("--poller names the workers' status-poller: it needs --workers 2 or more.") }
            guard concurrency >= workers else { throw ValidationError("--concurrency (\(concurrency)) is shared among the workers: give at least one per worker (\(workers)).") }
        }

        func run() async throws {
            let logger = LogSetup.make(level: logLevel)
            let location = try Composition.demoDatabase(database)
            guard await location.isReplaceable() else { throw usageError("\(DemoError.databaseHoldsOtherData(database))") }
            let now = Int64(Date().timeIntervalSince1970 / 60) * 60_000
            var configuration = DemoConfiguration(
                subscribers: subscribers, nights: nights, seed: seed, faultRate: faultRate,
                concurrency: concurrency, outageNight: outageNight, finalNightMs: now,
                backend: DemoBackend(rawValue: backend.rawValue)!)
            configuration.rates = rates
            if events {
                configuration.events = true
                configuration.eventsDownNight = eventsDownNight ?? (nights + 1) / 2
                say("outbound events delivered after each night to a loopback endpoint (5 % failures, down on night \(configuration.eventsDownNight!))")
            }
            configuration.windows.lapsed = try LapsedSweepSetting.resolve(within: lapsedWithin, every: lapsedEvery).sweep
            say("status-poller demo (\(backend.rawValue)): \(subscribers.formatted()) simulated subscribers, \(nights) nights with \(String(format: "%.1f", faultRate * 100)) % injected faults\(outageNight.map { ", an App Store outage on night \($0)" } ?? ""), then one fault-free night")
            say("database \(Composition.displayName(database)); simulator on 127.0.0.1 (a free port); * marks the fault-free night")
            if notifications {
                configuration.receiverDownNights = receiverDown.flatMap { Self.nights($0, within: nights) }
                say("first polling only, then with App Store Server Notifications \(backend == .verifyReceipt ? "V1" : "V2 and the history catch-up")"
                    + (configuration.receiverDownNights.map { "; the receiver is down from night \($0.lowerBound - 1) through night \($0.upperBound)" } ?? ""))
                let polling = try await Demo.play(configuration, database: location, logger: logger) { night in say(night.line) }
                say(polling.summary)
                configuration.notifications = true
                say("")
                let notified = try await Demo.play(configuration, database: location, logger: logger) { night in say(night.line) }
                say(notified.summary)
                say(Demo.comparison(polling: polling, notified: notified))
                if !polling.passed || !notified.passed { throw ExitCode(1) }
                return
            }
            let outcome = try await withWorkers { workers in
                try await Demo.play(configuration, database: location, logger: logger, workers: workers) { night in
                    say(night.line)
                }
            }
            say(outcome.summary)
            let query = "\"SELECT state, count(*) FROM entitlements GROUP BY state\""
            let inspect = Composition.isPostgres(database) ? "psql \(Composition.displayName(database)) -c \(query)" : "sqlite3 \(database) \(query)"
            say("\nInspect it: \(inspect)")
            if !outcome.passed { throw ExitCode(1) }
        }

        /// `FIRST-LAST` as nights within 1…`nights`.
        static func nights(_ text: String, within nights: Int) -> ClosedRange<Int>? {
            let parts = text.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 2, parts[0] >= 1, parts[0] <= parts[1], parts[1] <= nights else { return nil }
            return parts[0]...parts[1]
        }

        /// With --workers above 1, the worker processes and a private directory for their outputs,
        /// removed afterwards; nil (the night's job in process) otherwise.
        func withWorkers<T>(_ body: ((any NightWorkers)?) async throws -> T) async throws -> T {
            guard workers > 1 else { return try await body(nil) }
            let worker = try Composition.workerDatabase(database)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("status-poller-demo-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let binary = poller ?? DemoWorkerProcesses.siblingPoller()
            guard FileManager.default.isExecutableFile(atPath: binary) else {
                throw usageError("--workers \(workers) runs \(binary), which is not an executable file: build it (swift build --product status-poller) or name one with --poller PATH.")
            }
            let shares = Set([concurrency / workers, (concurrency + workers - 1) / workers]).sorted().map(String.init).joined(separator: "–")
            say("each night: \(workers) processes of \(binary) run --worker-name \(DemoWorkerProcesses.name(1))…\(workers), \(shares) receipts at once each; rows each verified follow \"by worker\"")
            return try await body(DemoWorkerProcesses(
                binary: binary, database: worker.url, password: worker.password, count: workers, logLevel: logLevel, directory: directory))
        }
    }
}
