import AppStoreBackends
import ArgumentParser
import BuildInfo
import Foundation
import Logging
import PollerCommandLine
import StatusPolling

/// What `run` and `backfill` share: read the secret, build the job from the composition point,
/// run it, print its report and end with its exit code. The job itself lives in the library.
struct PollCommand {
    var database: String
    var worker: Composition.Worker
    /// Whether the run's writers fill the outbox (`StoreOptions.writesOutbox`).
    var writesOutbox: Bool
    var appStore: AppStoreSettings
    var output: OutputSettings
    var serverAPI: ServerAPISettings
    var job: PollJob.Configuration
    /// Backfills read each chain's whole transaction history from the Server API.
    var readHistory = false
    /// Nightly runs read Apple's notification history first, when Server API credentials are configured.
    var catchesUpFirst = false

    func execute() async throws {
        let logger = LogSetup.make(level: output.logLevel, format: output.logFormat)
        if let proxy = appStore.proxySummary {
            logger.info("App Store connections go through an HTTP proxy", metadata: ["proxy": "\(proxy)"])
        }
        var backends = try self.backends()
        var job = self.job
        if let template = output.metricsFile {
            // Workers sharing a PostgreSQL database label their series, and a named worker writes a
            // file of its own; `{worker}` is replaced on SQLite too (by the host name by default).
            let shared = Composition.isPostgres(self.database)
            job.metricsFile = MetricsFile.path(template, worker: worker.name, perWorker: shared && worker.isNamed)
            job.metricsWorker = shared ? worker.name : nil
        }
        job.version = BuildInfo.summary
        job.recordedOptions.merge(serverAPI.recorded) { $1 }
        let database = try Composition.database(self.database, worker: worker, writesOutbox: writesOutbox)
        let catchUp = catchesUpFirst && !job.dryRun ? catchUpConfiguration(logger: logger) : nil
        // Workers of one PostgreSQL database share --server-api-rate: each sends its share.
        let sharing = backends.serverAPI == nil ? nil : try Composition.rateSharingWorkers(self.database, worker: worker)
        if sharing != nil { backends.serverAPI?.sharedRate = SharedRate() }
        let outcome = try await Composition.withStatusSource(appStore, backends: backends) { source, http in
            let pollJob = PollJob(
                configuration: job, database: database, source: source,
                catchUp: catchUp.map { PollJob.CatchUp(client: ServerAPIClient(configuration: $0.client, http: http), receiver: $0.receiver) }, logger: logger)
            guard let sharing, let shared = backends.serverAPI?.sharedRate, let rate = backends.serverAPI?.ratePerSecond else { return await pollJob.run() }
            return await shared.sharing(sharing, rate: rate, logger: logger) { await pollJob.run() }
        }
        if let error = outcome.error { FileHandle.standardError.write(Data("error: \(error)\n".utf8)) }
        if let report = outcome.report {
            switch output.report {
            case .text: print(report.text())
            case .json: print(try report.json())
            }
        }
        if outcome.exitCode != .success { throw ExitCode(outcome.exitCode.rawValue) }
    }

    /// How the nightly run reads Apple's notification history first, so one cron line covers a
    /// receiver that was down: nil without Server API credentials, or (a warning) when they do not
    /// make a configuration — the poll is the safety net.
    func catchUpConfiguration(logger: Logger) -> (client: ServerAPIConfiguration, receiver: NotificationReceiver.Configuration)? {
        guard serverAPI.hasCredentials else { return nil }
        do {
            let configuration = try serverAPI.notificationsConfiguration(appStore: appStore, purpose: "the notification history is read")
            return (configuration, .init(bundleID: appStore.bundleID, appAppleID: configuration.appAppleID, trustedRoots: configuration.trustedRoots))
        } catch {
            logger.warning("could not catch up with Apple's notification history; the poll goes on", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// The secrets each backend in use needs: verifyReceipt the shared secret, the Server API its
    /// key. `auto` uses whichever are configured and needs at least one.
    func backends() throws -> Composition.Backends {
        let credentials = try serverAPI.credentials(bundleID: appStore.bundleID)
        let configuration = try credentials.map { try serverAPI.configuration($0, appStore: appStore, readHistory: readHistory) }
        switch serverAPI.backend {
        case .verifyReceipt:
            return .init(secret: try SecretSource.read(file: appStore.sharedSecretFile), serverAPI: nil, choice: .verifyReceipt)
        case .serverAPI:
            return .init(secret: nil, serverAPI: configuration, choice: .serverAPI)
        case .auto:
            // With the Server API configured, a shared secret is optional (for receipts it cannot read).
            let secretGiven = SecretSource.isGiven(file: appStore.sharedSecretFile)
            let secret = configuration == nil || secretGiven ? try SecretSource.read(file: appStore.sharedSecretFile) : nil
            return .init(secret: secret, serverAPI: configuration, choice: .auto)
        }
    }
}
