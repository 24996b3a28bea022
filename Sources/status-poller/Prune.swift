import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

extension StatusPoller {
    /// `status-poller prune`: deletes the poller's own history older than the retention settings,
    /// in bounded batches, archiving it first when a folder is set. The nightly run does the same
    /// after polling when a setting is given; this is for a first big prune, or a separate timer.
    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete the audit trail, notifications and run history older than the retention settings (optionally archiving them as gzip JSON lines).",
            discussion: """
                Settings (options here, or audit_keep_days, notifications_keep_days, runs_keep_days and prune_archive_dir in \
                the config file or STATUS_POLLER_…): days to keep, at least 7; a setting left out keeps that history. A refund \
                request not yet answered and an extension Apple has not finished are kept whatever their age. With \
                prune_archive_dir, each table's rows go first to TABLE-STAMP.jsonl.gz there. Takes the run lock: exit 75 while \
                a run holds it.
                """)

        @OptionGroup var storeOptions: StoreOptions

        @Option(help: "Keep the audit trail (subscription_events) and finished extensions this many days.")
        var auditKeepDays: Int?

        @Option(help: "Keep received notifications and answered refund requests this many days.")
        var notificationsKeepDays: Int?

        @Option(help: "Keep the run history (poll_runs) this many days.")
        var runsKeepDays: Int?

        @Option(help: "Write what is deleted to gzip JSON lines files in this folder first.")
        var archiveDir: String?

        @Option(help: "The clock to prune at (ISO 8601; default: now).")
        var now: String?

        func run() async throws {
            let settings = try await storeOptions.settings()
            if let now, ISO8601.parse(now) == nil { throw usageError("--now must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(now)'.") }
            var options: [RetentionPolicy.Setting: Int] = [:]
            options[.audit] = auditKeepDays
            options[.notifications] = notificationsKeepDays
            options[.runs] = runsKeepDays
            let policy = try RetentionSettings.policy(settings, keepDays: options, archiveDirectory: archiveDir)
            guard !policy.keepsEverything else {
                throw usageError("nothing to prune: give --audit-keep-days, --notifications-keep-days or --runs-keep-days (or their settings).")
            }
            let location = try storeOptions.databasePath(settings)
            let lock: any RunLease
            do {
                lock = try await Composition.database(location, writesOutbox: false).acquireRunLock(holder: .current(command: "status-poller prune"))
            } catch let failure as RunLock.Failure {
                if case .held = failure { throw exitError(.locked, "\(failure)") }
                throw usageError("\(failure)")
            }
            defer { lock.release() }
            let logger = LogSetup.make(level: .notice, format: .text)
            let report: Pruner.Report
            do {
                report = try await storeOptions.withStore(settings) { store, _ in
                    try await Pruner(store: store, policy: policy, logger: logger).prune(nowMs: ISO8601.milliseconds(now))
                }
            } catch let error as RetentionError {
                throw usageError("\(error); what was deleted before it is in the archive.")
            } catch let error as StoreError {
                throw exitError(error.exitCode, "\(error)")
            }
            print(report.text)
        }
    }
}
