import AppStoreSimulator
import ArgumentParser
import Foundation
import Logging
import PollerCommandLine
import ServiceLifecycle

extension StatusPollerDemo {
    /// `status-poller-demo simulate`: the App Store simulator on its own, for trying `run` by hand.
    struct Simulate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve a simulated App Store (verifyReceipt and the App Store Server API) on loopback until interrupted.",
            discussion: """
                Production answers on /verifyReceipt, the sandbox on /sandbox/verifyReceipt. The App Store \
                Server API (Get All Subscription Statuses, Get Transaction History v2) answers under /inApps/… \
                and /sandbox/inApps/…, signed by a test PKI made at start; its root certificate and the \
                In-App Purchase key it expects are written to --key-dir. The simulated clock starts at \
                --start (default: now) and moves with POST /simulator/clock?advance_days=N; \
                GET /simulator/truth?user_id=sim-user-1 shows a subscriber's correct entitlement.
                """)

        @Option(help: "Address to listen on (keep it on loopback).")
        var host = "127.0.0.1"

        @Option(help: "Port to listen on (0: any free port).")
        var port = 8787

        @Option(help: "Simulated subscribers.")
        var subscribers = 1000

        @Option(help: "Seed of the population and of the faults.")
        var seed: UInt64 = 42

        @Option(help: "The simulated clock's start, ISO 8601 (default: now).")
        var start: String?

        @Option(help: "Bundle id written in every receipt.")
        var bundleId = "com.example.premium"

        @Option(help: "File holding the shared secret the simulator expects (default: simulator-shared-secret).")
        var sharedSecretFile: String?

        @Option(help: "Billing grace period in days (0: none).")
        var gracePeriodDays = 16

        @Option(name: .customLong("rate"), help: "A lifecycle rate per billing period, EVENT=RATE (repeatable): \(PopulationConfiguration.rateNames.joined(separator: ", ")).")
        var eventRates: [String] = []

        @Option(help: "Total per-request fault probability, spread over every fault kind.")
        var faultRate = 0.0

        @Option(name: .customLong("fault"), help: "One fault's rate, KIND=RATE (repeatable): \(Self.faultKinds.joined(separator: ", ")).")
        var faultRates: [String] = []

        @Option(help: "Latency: none, fixed:5ms, uniform:1ms-20ms or lognormal:10ms,0.6.")
        var latency = "none"

        @Option(help: "Seconds a slow answer takes (set it above the client's timeout).")
        var slowAnswerSeconds = 12.0

        @Option(help: "An outage window in simulated time: START/END, both ISO 8601.")
        var outage: [String] = []

        @Option(help: "Directory for the Server API files: simulator-root.pem, simulator-root.der and SubscriptionKey_<KEYID>.p8 (default: a new temporary directory).")
        var keyDir: String?

        @Option(help: "The app's Apple id, in the Server API's production answers.")
        var appAppleId: Int64 = 1_234_567_890

        @Option(help: "Write the population's user ids and receipts as CSV (user_id,latest_receipt) to this file.")
        var enrolmentFile: String?

        @Option(help: "Write one JSON line per verifyReceipt request to this file (emptied first): start and end in µs since 1970, the URL's client=… parameter, the subscriber, the outcome; never a receipt.")
        var requestLog: String?

        @Option(help: "Post App Store Server Notifications to this URL (e.g. a `notifications serve` on loopback): one per lifecycle event at its moment on the simulated clock, retried on Apple's schedule until a 200.")
        var notifyUrl: String?

        @Option(help: "Notification version: 2 (signed, the default) or 1 (seed 004's JSON with the shared secret as password).")
        var notifyVersion = 2

        @Option(name: .customLong("notify-fault"), help: "A delivery fault's rate, KIND=RATE (repeatable): lost (retried on Apple's schedule), duplicated (taken, then sent again), delayed (up to an hour late, so out of order).")
        var notifyFaults: [String] = []

        @Flag(help: "A lean stand-in for benchmarks: a valid answer of one fixed shape for any receipt after --latency, nothing else (no population, faults or truth).")
        var lean = false

        func validate() throws {
            guard (1...2_000_000).contains(subscribers) else { throw ValidationError("--subscribers must be between 1 and 2,000,000.") }
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
            guard Latency(parsing: latency) != nil else { throw ValidationError("--latency must be none, fixed:5ms, uniform:1ms-20ms or lognormal:10ms,0.6; got '\(latency)'.") }
            guard (0...1).contains(faultRate) else { throw ValidationError("--fault-rate must be between 0 and 1.") }
            if let start, ISO8601.parse(start) == nil { throw ValidationError("--start must be ISO 8601, got '\(start)'.") }
            _ = try parsedFaultRates()
            _ = try PopulationConfiguration(startMs: 0).applying(rates: eventRates)
            _ = try parsedOutages()
            guard [1, 2].contains(notifyVersion) else { throw ValidationError("--notify-version must be 1 or 2, got \(notifyVersion).") }
            if let notifyUrl, URL(string: notifyUrl)?.scheme.map({ ["http", "https"].contains($0) }) != true {
                throw ValidationError("--notify-url must be an http:// or https:// URL, got '\(notifyUrl)'.")
            }
            if !notifyFaults.isEmpty, notifyUrl == nil { throw ValidationError("--notify-fault needs --notify-url.") }
            _ = try parsedNotificationFaults()
            if lean, notifyUrl != nil { throw ValidationError("--lean sends no notifications; drop --notify-url.") }
        }

        func parsedNotificationFaults() throws -> NotificationFaults {
            var faults = NotificationFaults()
            for item in notifyFaults {
                let parts = item.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let rate = Double(parts[1]), (0...1).contains(rate) else { throw notifyFaultError(item) }
                switch parts[0] {
                case "lost": faults.lost = rate
                case "duplicated": faults.duplicated = rate
                case "delayed": faults.delayed = rate
                default: throw notifyFaultError(item)
                }
            }
            return faults
        }

        func notifyFaultError(_ item: String) -> ValidationError {
            ValidationError("--notify-fault takes KIND=RATE with KIND one of lost, duplicated, delayed and RATE within 0…1; got '\(item)'.")
        }

        /// verifyReceipt's fault kinds, then the Server API's with a `server_api_` prefix.
        static let faultKinds = FaultConfiguration.Fault.allCases.map(\.rawValue) + FaultConfiguration.ServerAPIFault.allCases.map { "server_api_\($0.rawValue)" }

        func parsedFaultRates() throws -> (verifyReceipt: [FaultConfiguration.Fault: Double], serverAPI: [FaultConfiguration.ServerAPIFault: Double]) {
            var rates: [FaultConfiguration.Fault: Double] = [:]
            var serverAPI: [FaultConfiguration.ServerAPIFault: Double] = [:]
            for item in faultRates {
                let parts = item.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let rate = Double(parts[1]), (0...1).contains(rate) else { throw faultError(item) }
                let kind = String(parts[0])
                if let fault = FaultConfiguration.Fault(rawValue: kind) {
                    rates[fault] = rate
                } else if kind.hasPrefix("server_api_"), let fault = FaultConfiguration.ServerAPIFault(rawValue: String(kind.dropFirst("server_api_".count))) {
                    serverAPI[fault] = rate
                } else {
                    throw faultError(item)
                }
            }
            return (rates, serverAPI)
        }

        func faultError(_ item: String) -> ValidationError {
            ValidationError("--fault takes KIND=RATE with KIND one of \(Self.faultKinds.joined(separator: ", ")); got '\(item)'.")
        }

        func parsedOutages() throws -> [ClosedRange<Int64>] {
            try outage.map { window in
                let parts = window.split(separator: "/")
                guard parts.count == 2, let from = ISO8601.parse(String(parts[0])), let to = ISO8601.parse(String(parts[1])), from <= to else {
                    throw ValidationError("--outage takes START/END in ISO 8601; got '\(window)'.")
                }
                return Int64(from.timeIntervalSince1970 * 1000)...Int64(to.timeIntervalSince1970 * 1000)
            }
        }

        func run() async throws {
            let logger = LogSetup.make(level: .info)
            if lean { return try await runLean(logger: logger) }
            let startMs = ISO8601.milliseconds(start)
            var population = try PopulationConfiguration(subscribers: subscribers, seed: seed, startMs: startMs, bundleID: bundleId, appAppleID: appAppleId, gracePeriodDays: gracePeriodDays)
                .applying(rates: eventRates)
            if let sharedSecretFile {
                guard let data = FileManager.default.contents(atPath: sharedSecretFile) else { throw usageError("cannot read \(sharedSecretFile).") }
                population.sharedSecret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            var faults = FaultConfiguration.spread(total: faultRate, latency: Latency(parsing: latency) ?? .none, slowAnswerDelay: .milliseconds(Int64(slowAnswerSeconds * 1000)))
            let chosen = try parsedFaultRates()
            for (fault, rate) in chosen.verifyReceipt { faults.rates[fault] = rate }
            for (fault, rate) in chosen.serverAPI { faults.serverAPIRates[fault] = rate }
            faults.outages = try parsedOutages()
            let simulator = AppStoreSimulator(population: Population(population), faults: faults)
            if let enrolmentFile {
                var csv = "user_id,latest_receipt\n"
                for (user, receipt) in simulator.enrolment(at: startMs) { csv += "\(user),\(receipt)\n" }
                do { try Data(csv.utf8).write(to: URL(fileURLWithPath: enrolmentFile)) } catch { throw usageError("cannot write \(enrolmentFile): \(error)") }
                FileHandle.standardError.write(Data("""
                    wrote \(subscribers) enrolments to \(enrolmentFile); load them into a migrated database with
                      sqlite3 DB ".import --csv \(enrolmentFile) enrolment" "INSERT INTO subscriptions (user_id, latest_receipt) SELECT user_id, latest_receipt FROM enrolment" "DROP TABLE enrolment"

                    """.utf8))
            }
            let rate = faults.totalRate
            let keyFiles: ServerAPIKeyFiles
            do {
                keyFiles = try ServerAPIKeyFiles.write(simulator, into: keyDir ?? Self.newTemporaryDirectory())
            } catch {
                throw usageError("cannot write the Server API key files: \(error)")
            }
            let log: RequestLog?
            do {
                log = try requestLog.map { try RequestLog(path: $0) }
            } catch {
                throw usageError("cannot write the request log \(requestLog ?? ""): \(error)")
            }
            let key = simulator.serverAPIKey
            let secretHint = sharedSecretFile == nil ? "APPSTORE_SHARED_SECRET=\(population.sharedSecret) " : ""
            var alongside: [any Service] = []
            if let notifyUrl {
                simulator.sendNotifications(version: notifyVersion, faults: try parsedNotificationFaults())
                alongside.append(NotificationPusher.Service(NotificationPusher(simulator: simulator, url: notifyUrl), logger: logger))
            }
            try await SimulatorServer.runUntilSignalled(simulator, host: host, port: port, logger: logger, requestLog: log, alongside: alongside) { endpoints in
                say("""
                    App Store simulator: \(subscribers) subscribers, seed \(seed), clock \(Date(timeIntervalSince1970: Double(startMs) / 1000).formatted(.iso8601)), fault rate \(rate)
                      production  \(endpoints.productionURL)
                      sandbox     \(endpoints.sandboxURL)
                      clock       \(endpoints.baseURL)/simulator/clock   (POST ?advance_days=1)
                      truth       \(endpoints.baseURL)/simulator/truth?user_id=sim-user-1
                    Try: \(secretHint)status-poller run --database DB --bundle-id \(bundleId) --production-url \(endpoints.productionURL) --sandbox-url \(endpoints.sandboxURL)
                    App Store Server API (signed by a test root made at start):
                      server-api          \(endpoints.serverAPIURL)
                      server-api-sandbox  \(endpoints.serverAPISandboxURL)
                      bundle id     \(bundleId)
                      app apple id  \(appAppleId)
                      key id        \(key.keyID)
                      issuer id     \(key.issuerID)
                      private key   \(keyFiles.privateKeyPath)
                      root (PEM)    \(keyFiles.rootPEMPath)
                      root (DER)    \(keyFiles.rootDERPath)
                    Try: status-poller run --database DB --bundle-id \(bundleId) --backend server-api --server-api-url \(endpoints.serverAPIURL) --server-api-sandbox-url \(endpoints.serverAPISandboxURL) --issuer-id \(key.issuerID) --key-id \(key.keyID) --private-key-file \(keyFiles.privateKeyPath) --app-apple-id \(appAppleId) --trusted-root-file \(keyFiles.rootDERPath)
                    \(notifyUrl.map { "Notifications V\(notifyVersion) to \($0) as the clock moves (test: status-poller notifications test --server-api-url \(endpoints.serverAPIURL) …)." } ?? "No notifications (--notify-url URL sends them).")
                    Ctrl-C stops it.
                    """)
            }
        }

        /// A fresh directory under the system's temporary one, for the key files.
        static func newTemporaryDirectory() -> String {
            FileManager.default.temporaryDirectory.appendingPathComponent("status-poller-simulator-\(UUID().uuidString.prefix(8))").path
        }

        /// `--lean`: the benchmark stand-in.
        func runLean(logger: Logger) async throws {
            var secret = "simulator-shared-secret"
            if let sharedSecretFile {
                guard let data = FileManager.default.contents(atPath: sharedSecretFile) else { throw usageError("cannot read \(sharedSecretFile).") }
                secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let delay: Duration
            switch Latency(parsing: latency) {
            case .fixed(let fixed)?: delay = fixed
            case .some(.none): delay = .zero
            default: throw usageError("--lean takes --latency none or fixed:50ms, got '\(latency)'.")
            }
            let standIn = LeanStandIn(bundleID: bundleId, sharedSecret: secret, latency: delay, appAppleID: appAppleId)
            let keyFiles: ServerAPIKeyFiles
            do {
                keyFiles = try ServerAPIKeyFiles.write(pki: standIn.pki, key: standIn.serverAPIKey, into: keyDir ?? Self.newTemporaryDirectory())
            } catch {
                throw usageError("cannot write the Server API key files: \(error)")
            }
            let key = standIn.serverAPIKey
            try await standIn.runUntilSignalled(host: host, port: port, logger: logger) { endpoints in
                say("""
                    App Store stand-in (lean): latency \(latency), bundle \(bundleId)
                      production  \(endpoints.productionURL)
                      sandbox     \(endpoints.sandboxURL)
                      server-api          \(endpoints.serverAPIURL)
                      server-api-sandbox  \(endpoints.serverAPISandboxURL)
                      key id        \(key.keyID)
                      issuer id     \(key.issuerID)
                      private key   \(keyFiles.privateKeyPath)
                      root (DER)    \(keyFiles.rootDERPath)
                    """)
            }
        }
    }
}
