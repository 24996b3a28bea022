import ArgumentParser
import Foundation
import StatusPolling

/// What `run` and `backfill` share: read the secret, build the job from the composition point,
/// run it, print its report and end with its exit code. The job itself lives in the library.
struct PollCommand {
    var database: String
    var appStore: AppStoreSettings
    var output: OutputSettings
    var job: PollJob.Configuration

    func execute() async throws {
        let logger = LogSetup.make(level: output.logLevel, format: output.logFormat)
        let secret = try SecretSource.read(file: appStore.sharedSecretFile)
        var job = self.job
        job.metricsFile = output.metricsFile
        let outcome = try await Composition.withStatusSource(appStore, secret: secret) { source in
            await PollJob(configuration: job, database: Composition.database(database), source: source, logger: logger).run()
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
}
