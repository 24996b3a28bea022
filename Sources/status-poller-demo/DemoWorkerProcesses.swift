import AppStoreSimulator
import Foundation
import Logging
import PollerCommandLine
import PollingDemo
import StatusPolling

/// `demo --workers N`: each night is played by N processes of `status-poller` (the one beside this
/// binary, or `--poller`), started at once, each `status-poller run --worker-name demo-worker-K` against the demo's simulator and PostgreSQL
/// database, as N cron jobs on N hosts would run it. They share the night through its leases; the
/// demo waits for all of them, then checks every row as it does after an in-process night.
///
/// A worker gets what the in-process job has: the simulator's URLs, the bundle id, the night's
/// clock, the request timeout and attempts, a share of the concurrency, and the whole Server API
/// rate, which the workers share through the database as Apple counts it, per app. Secrets travel in its environment, never on
/// its command line (`ps` shows that to every user): the shared secret, the In-App Purchase key,
/// the database password (PGPASSWORD). Its environment carries no other STATUS_POLLER_ or
/// APPSTORE_ variable, so a config file or setting of the caller's cannot make the workers
/// differ from the in-process night. Retry backoffs are the command line's defaults (longer than
/// the in-process demo's), which costs time on faulty nights, not agreement.
struct DemoWorkerProcesses: NightWorkers {
    /// The `status-poller` the workers run.
    var binary: String
    /// The database URL without any password.
    var database: String
    /// The database password the demo itself resolved (URL, PGPASSWORD or ~/.pgpass), if any.
    var password: String?
    var count: Int
    var logLevel: Logger.Level
    /// Where the workers' outputs and the simulator's Server API files go; the demo removes it.
    var directory: String

    func play(_ night: NightRequest) async throws -> NightRun {
        let keyFiles = night.configuration.backend == .verifyReceipt ? nil : try ServerAPIKeyFiles.write(night.simulator, into: directory + "/server-api")
        let environment = self.environment(night)
        let finished = try await withThrowingTaskGroup(of: (Int, NightRun.Worker).self) { group in
            for k in 1...count {
                let arguments = self.arguments(worker: k, night, rootFile: keyFiles?.rootDERPath)
                group.addTask { (k, try await self.run(worker: k, arguments: arguments, environment: environment, night: night.number)) }
            }
            var workers: [(Int, NightRun.Worker)] = []
            for try await worker in group { workers.append(worker) }
            return workers.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return NightRun(nowMs: night.clockMs, workers: finished)
    }

    static func name(_ k: Int) -> String { "demo-worker-\(k)" }

    /// Worker `k`'s share of `total` (1-based; the first ones get the remainder), at least 1.
    func share(_ total: Int, worker k: Int) -> Int {
        max(1, total / count + (k <= total % count ? 1 : 0))
    }

    func arguments(worker k: Int, _ night: NightRequest, rootFile: String?) -> [String] {
        let configuration = night.configuration
        let population = night.simulator.population.configuration
        let now = Date(timeIntervalSince1970: Double(night.clockMs) / 1000).formatted(.iso8601)
        var arguments = [
            "run", "--database", database, "--worker-name", Self.name(k), "--now", now,
            "--bundle-id", population.bundleID, "--production-url", night.endpoints.productionURL, "--sandbox-url", night.endpoints.sandboxURL,
            "--concurrency", String(share(configuration.concurrency, worker: k)),
            "--request-timeout", Limits.seconds(configuration.requestTimeout), "--max-attempts", String(configuration.retry.maxAttempts),
            "--report", "json", "--log-level", logLevel.rawValue,
        ]
        let lapsed = configuration.windows.lapsed
        arguments += [
            "--lapsed-every", String(lapsed.map { Limits.days($0.every) } ?? 0),
            "--lapsed-within", String(Limits.days(lapsed?.within ?? LapsedSweep.defaultWithin)),
        ]
        if configuration.backend != .verifyReceipt, let rootFile {
            let key = night.simulator.serverAPIKey
            arguments += [
                "--backend", configuration.backend.rawValue, "--server-api-url", night.endpoints.serverAPIURL,
                "--server-api-sandbox-url", night.endpoints.serverAPISandboxURL, "--issuer-id", key.issuerID, "--key-id", key.keyID,
                "--app-apple-id", String(population.appAppleID), "--trusted-root-file", rootFile,
                // The workers share the rate among themselves through the database.
                "--server-api-rate", String(configuration.serverAPIRate),
            ]
        }
        return arguments
    }

    /// The caller's environment without status-poller's, the App Store's and the proxy variables, plus the secrets.
    func environment(_ night: NightRequest) -> [String: String] {
        // No proxy either: the workers talk to the demo's own simulator on loopback.
        let proxies: Set<String> = ["https_proxy", "http_proxy", "no_proxy"]
        var environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("STATUS_POLLER_") && !$0.key.hasPrefix("APPSTORE_") && !proxies.contains($0.key.lowercased())
        }
        environment["APPSTORE_SHARED_SECRET"] = night.simulator.population.configuration.sharedSecret
        if night.configuration.backend != .verifyReceipt { environment["APPSTORE_PRIVATE_KEY"] = night.simulator.serverAPIKey.privateKeyPEM }
        if let password { environment["PGPASSWORD"] = password }
        // The demo's deliverer reads the outbox the workers' changes write (`--events`).
        if night.configuration.events { environment["STATUS_POLLER_EVENT_OUTBOX"] = "true" }
        return environment
    }

    /// Runs one worker to its end; its log lines go on to the demo's stderr, its report is read back.
    func run(worker k: Int, arguments: [String], environment: [String: String], night: Int) async throws -> NightRun.Worker {
        let output = URL(fileURLWithPath: directory).appendingPathComponent("night-\(night)-\(Self.name(k)).out")
        let errors = URL(fileURLWithPath: directory).appendingPathComponent("night-\(night)-\(Self.name(k)).err")
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        // Started and awaited on a pidfd, blocking no thread (ChildProcess).
        let end = try await ChildProcess.start(binary, arguments, environment: environment, stdout: output, stderr: errors).end.value
        let log = (try? Data(contentsOf: errors)) ?? Data()
        if !log.isEmpty { FileHandle.standardError.write(log) }
        guard case .exited(let code) = end, [RunExitCode.success, .someFailed, .aborted, .interrupted].map(\.rawValue).contains(code),
            let report = try? RunReport(workerJSON: Data(contentsOf: output))
        else {
            let tail = String(decoding: log.suffix(600), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw DemoError.nightDidNotRun(night, "\(Self.name(k)) \(end)\(tail.isEmpty ? "" : ": \(tail)")")
        }
        return NightRun.Worker(name: Self.name(k), report: report)
    }

    /// The `status-poller` beside this executable: the demo and the poller are built and installed
    /// together.
    static func siblingPoller() -> String {
        let this: String
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            this = path
        } else {
            this = Bundle.main.executablePath ?? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
        }
        return URL(fileURLWithPath: this).deletingLastPathComponent().appendingPathComponent("status-poller").path
    }
}
