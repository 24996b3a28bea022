import ArgumentParser
import BuildInfo
import Foundation
import Logging
import StatusPolling

/// What `run` and `backfill` share: read the secret, build the job from the composition point,
/// run it, print its report and end with its exit code. The job itself lives in the library.
struct PollCommand {
    var database: String
    var worker: Composition.Worker
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
        let database = try Composition.database(self.database, worker: worker)
        if catchesUpFirst, !job.dryRun, case .nightly(var windows) = job.selection {
            // Rows recorded since the history was read without a gap heard every change Apple notified.
            windows.coveredFrom = await catchUp(database, logger: logger)
            job.selection = .nightly(windows)
        }
        // Workers of one PostgreSQL database share --server-api-rate: each sends its share.
        let sharing = backends.serverAPI == nil ? nil : try Composition.rateSharingWorkers(self.database, worker: worker)
        if sharing != nil { backends.serverAPI?.sharedRate = SharedRate() }
        let outcome = try await Composition.withStatusSource(appStore, backends: backends) { source in
            let pollJob = PollJob(configuration: job, database: database, source: source, logger: logger)
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

    /// Reads Apple's notification history since the last catch-up into the rows, before the poll
    /// selects them, so one cron line covers a receiver that was down. Skipped without Server API
    /// credentials; a failure is a warning, never the run's end: the poll is the safety net.
    /// Returns, for each environment read through the run's clock, where its gapless reading began.
    func catchUp(_ database: any PollingDatabase, logger: Logger) async -> [String: Int64] {
        guard serverAPI.hasCredentials else { return [:] }
        var covered: [String: Int64] = [:]
        do {
            let configuration = try serverAPI.notificationsConfiguration(appStore: appStore, purpose: "the notification history is read")
            let store = try await database.open()
            let receiver = NotificationReceiver(
                .init(bundleID: appStore.bundleID, appAppleID: configuration.appAppleID, trustedRoots: configuration.trustedRoots), inbox: store, logger: logger)
            do {
                try await KeepAliveHTTPClient.withClient(appStore.httpConfiguration) { http in
                    let client = ServerAPIClient(configuration: configuration, http: http)
                    let catchUp = NotificationCatchUp(client: client, receiver: receiver, inbox: store)
                    for environment in [AppStoreEnvironment.production, .sandbox] {
                        do {
                            covered[environment.rawValue] = try await catchUp.run(environment, nowMs: job.nowMs, logger: logger).coveredFromMs
                        } catch {
                            logger.warning(
                                "could not catch up with Apple's notification history; the poll goes on, asking every row in a window not fresh by --fresh-within, and the next catch-up starts from the same checkpoint",
                                metadata: ["environment": "\(environment.rawValue)", "error": "\(error)"])
                        }
                    }
                    await followMassExtensions(SupportDesk(store: store, bundleID: appStore.bundleID), client: client, logger: logger)
                }
            } catch {
                logger.warning("could not catch up with Apple's notification history; the poll goes on", metadata: ["error": "\(error)"])
            }
            try? await store.close()
        } catch {
            logger.warning("could not catch up with Apple's notification history; the poll goes on", metadata: ["error": "\(error)"])
        }
        return covered
    }

    /// Asks Apple how far each pending mass renewal-date extension got (`extend status` does the
    /// same); a failure is a warning, and the next night or `extend status` asks again.
    func followMassExtensions(_ desk: SupportDesk, client: ServerAPIClient, logger: Logger) async {
        do {
            for request in try await desk.followMassExtensions(client: client, nowMs: job.nowMs, logger: logger) where request.checkedAtMs == job.nowMs {
                logger.notice(
                    request.completedAtMs == nil ? "a mass renewal-date extension is in progress" : "a mass renewal-date extension is complete",
                    metadata: [
                        "request_identifier": "\(request.requestIdentifier)", "product_id": "\(request.productID)",
                        "succeeded": "\(request.succeeded.map(String.init) ?? "-")", "failed": "\(request.failed.map(String.init) ?? "-")",
                    ])
            }
        } catch {
            logger.warning("could not ask Apple how far the mass renewal-date extensions got; `extend status` or the next night asks again", metadata: ["error": "\(error)"])
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
