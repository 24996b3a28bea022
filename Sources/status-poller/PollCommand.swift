import ArgumentParser
import Foundation
import Logging
import SQLiteStore
import StatusPolling

/// What `run` and `backfill` share: the lock, the run history, signals, progress, the report, the
/// metrics file and the exit code. Each command only says which rows.
struct PollCommand {
    var mode: RunMode
    var database: String
    var appStore: AppStoreSettings
    var output: OutputSettings
    var nowMs: Int64
    var dryRun: Bool
    var maxRate: Double?
    /// Settings of the selection, for the run history.
    var selectionOptions: [String: String]

    /// What the command decided to run, once the store is open and the lock held.
    struct Plan {
        var selection: RowSelection
        var runID: Int64?
        var resumeAfter: Int64 = 0
        var note: String?
    }

    func execute(plan makePlan: (SQLiteSubscriptionStore, RunStart) async throws -> Plan) async throws {
        var logger = Logging.make(level: output.logLevel, format: output.logFormat)
        let secret = try SecretSource.read(file: appStore.sharedSecretFile)
        let store = try openStore(database)
        defer { try? store.close() }

        let lockPath = RunLock.path(forDatabase: database)
        let lock: RunLock
        do {
            lock = try RunLock.acquire(path: lockPath, holder: .current(command: "status-poller \(mode.rawValue)\(dryRun ? " --dry-run" : "")"))
        } catch let failure as RunLock.Failure {
            if case .held = failure {
                FileHandle.standardError.write(Data("error: \(failure)\n".utf8))
                throw ExitCode(RunExitCode.locked.rawValue)
            }
            throw usageError("\(failure)")
        }
        defer { lock.release() }

        let start = RunStart.current(mode: mode, nowMs: nowMs, options: appStore.recorded.merging(selectionOptions) { $1 }.merging(["dry_run": String(dryRun)]) { $1 })
        let plan: Plan
        do { plan = try await makePlan(store, start) } catch let exit as ExitCode { throw exit } catch {
            FileHandle.standardError.write(Data("error: the database could not be prepared for the run: \(error)\n".utf8))
            throw ExitCode(RunExitCode.aborted.rawValue)
        }
        if let runID = plan.runID { logger[metadataKey: "run.id"] = "\(runID)" }
        if let note = plan.note { logger.notice("\(note)") }

        let stop = StopSignal()
        let signals = SignalHandling.install(stop: stop, logger: logger)
        defer { signals.cancel() }
        let progress = ProgressReporter(logger: logger)
        let configuration = PollRun.Configuration(
            bundleID: appStore.bundleID, nowMs: nowMs, selection: plan.selection, concurrency: appStore.concurrency,
            dryRun: dryRun, runID: plan.runID, resumeAfter: plan.resumeAfter, maxRate: maxRate)
        let http = KeepAliveHTTPClient.Configuration(maxIdleConnectionsPerEndpoint: max(appStore.concurrency, 8))
        let report = try await VerifyReceiptClient.withClient(appStore.clientConfiguration(secret: secret), http: http) { client in
            await PollRun(configuration: configuration, store: store, source: client, logger: logger, stop: stop, progress: { progress.update($0) }).run()
        }
        progress.finish()

        switch output.report {
        case .text: print(report.text())
        case .json: print(try report.json())
        }
        if let metricsFile = output.metricsFile {
            do {
                let lastSuccess = try await store.lastSuccessfulRunFinishedAt(mode: mode)
                try MetricsFile.write(report, mode: mode, lastSuccessMs: lastSuccess, to: metricsFile)
            } catch {
                logger.error("could not write the metrics file", metadata: ["path": "\(metricsFile)", "error": "\(error)"])
            }
        }
        if report.exitCode != .success { throw ExitCode(report.exitCode.rawValue) }
    }
}
