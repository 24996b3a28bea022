import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

extension StatusPoller {
    /// `status-poller backfill`: verify chosen rows, ignoring the nightly windows; resumable.
    struct Backfill: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify chosen subscriptions whatever their expiry; checkpointed, resumable with --resume.",
            discussion: """
                Choose the rows with exactly one of --all, --user-id (repeatable), --users-file or \
                --expired-since. The set is fixed when the backfill starts; its position is checkpointed \
                in the run history, and --resume finishes an interrupted backfill without verifying again \
                what was done. Exit codes as for `run`.
                """)

        @OptionGroup var storeOptions: StoreOptions

        @OptionGroup(title: "Several workers (PostgreSQL)") var workerOptions: WorkerOptions

        @OptionGroup var appStore: AppStoreOptions

        @OptionGroup(title: "App Store Server API") var serverAPI: ServerAPIOptions

        @Flag(help: "Every row.")
        var all = false

        @Option(name: .customLong("user-id"), help: "A user's rows (repeatable).")
        var userIDs: [String] = []

        @Option(help: "A file with one user id per line.")
        var usersFile: String?

        @Option(help: "Rows that expired at or after this date (ISO 8601), and rows never verified.")
        var expiredSince: String?

        @Flag(help: "Continue the latest interrupted backfill from its checkpoint.")
        var resume = false

        @Option(help: "At most this many rows started per second.")
        var maxRate: Double?

        @Option(help: "The run's clock as ISO 8601. Default: now.")
        var now: String?

        @OptionGroup var output: OutputOptions

        func validate() throws {
            let chosen = [all, !userIDs.isEmpty, usersFile != nil, expiredSince != nil].filter { $0 }.count
            if resume {
                guard chosen == 0 else { throw ValidationError("--resume continues the interrupted backfill with its own rows; give no --all, --user-id, --users-file or --expired-since.") }
            } else {
                guard chosen == 1 else { throw ValidationError("choose the rows with exactly one of --all, --user-id, --users-file, --expired-since (or --resume).") }
            }
            if let expiredSince, ISO8601.parse(expiredSince) == nil { throw ValidationError("--expired-since must be a date like 2026-11-01 or 2026-11-01T00:00:00Z.") }
            if let now, ISO8601.parse(now) == nil { throw ValidationError("--now must be ISO 8601, got '\(now)'.") }
            if let maxRate, !(maxRate > 0) { throw ValidationError("--max-rate must be above 0.") }
        }

        func targets() throws -> (PollJob.Selection, [String: String]) {
            if all { return (.backfill(.all), ["targets": "all"]) }
            if let expiredSince { return (.backfill(.expiredSince(ISO8601.milliseconds(expiredSince))), ["targets": "expired_since", "expired_since": expiredSince]) }
            if let usersFile {
                guard let data = FileManager.default.contents(atPath: usersFile) else { throw usageError("cannot read --users-file \(usersFile).") }
                let users = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
                return (.backfill(.userIDs(users)), ["targets": "users_file", "users_file": usersFile, "users": String(users.count)])
            }
            return (.backfill(.userIDs(userIDs)), ["targets": "user_ids", "users": String(userIDs.count)])
        }

        func run() async throws {
            let settings = try await storeOptions.settings()
            let database = try storeOptions.databasePath(settings)
            let appStore = try self.appStore.resolve(settings)
            let serverAPI = try self.serverAPI.resolve(settings, allowInsecureHTTP: appStore.allowInsecureHTTP)
            let output = try self.output.resolve(settings)
            let (selection, recorded): (PollJob.Selection, [String: String]) = resume ? (.resumeBackfill, ["targets": "resume"]) : try targets()
            let job = PollJob.Configuration(
                selection: selection, bundleID: appStore.bundleID, nowMs: ISO8601.milliseconds(now), concurrency: appStore.concurrency,
                maxRate: maxRate,
                recordedOptions: appStore.recorded.merging(recorded) { $1 }.merging(maxRate.map { ["max_rate": String($0)] } ?? [:]) { $1 },
                circuitBreaker: appStore.breaker, deadline: appStore.deadline, overload: appStore.overload)
            try await PollCommand(
                database: database, worker: try workerOptions.settings(settings), writesOutbox: storeOptions.writesOutbox(settings), appStore: appStore, output: output, serverAPI: serverAPI, job: job, readHistory: true).execute()
        }
    }
}
