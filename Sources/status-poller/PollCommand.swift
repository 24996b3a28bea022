import ArgumentParser
import Foundation
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

    func execute() async throws {
        let logger = LogSetup.make(level: output.logLevel, format: output.logFormat)
        let backends = try self.backends()
        var job = self.job
        job.metricsFile = output.metricsFile
        job.recordedOptions.merge(serverAPI.recorded) { $1 }
        let database = try Composition.database(self.database, worker: worker)
        let outcome = try await Composition.withStatusSource(appStore, backends: backends) { source in
            await PollJob(configuration: job, database: database, source: source, logger: logger).run()
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
            let secretGiven = appStore.sharedSecretFile != nil || ProcessInfo.processInfo.environment[SecretSource.environmentVariable] != nil
            let secret = configuration == nil || secretGiven ? try SecretSource.read(file: appStore.sharedSecretFile) : nil
            return .init(secret: secret, serverAPI: configuration, choice: .auto)
        }
    }
}
