import ArgumentParser
import Foundation
import SQLiteStore
import StatusPolling

extension StatusPoller {
    /// `status-poller run`: the nightly job.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify every subscription whose access may be changing and write back Apple's answer.",
            discussion: """
                The shared secret is read from the APPSTORE_SHARED_SECRET environment variable or from \
                --shared-secret-file, never from an argument.

                Exit codes: 0 every selected subscription verified; 1 the run finished but some failed \
                (their access is unchanged); 2 usage or configuration error; 3 run aborted (Apple answered \
                21004, or the database could not be read or stayed locked); 4 stopped by SIGTERM/SIGINT (what was done is \
                written); 75 another run holds the database's lock.
                """)

        @OptionGroup var storeOptions: StoreOptions

        @OptionGroup var appStore: AppStoreOptions

        @Option(help: "The run's clock as ISO 8601 (e.g. 2026-11-22T03:00:00Z). Default: now.")
        var now: String?

        @Option(help: "Select rows that expired at most this many hours ago (default: 48).")
        var expiredWithinHours: Double?

        @Option(help: "Select rows that expire within this many hours (default: 24).")
        var expiringWithinHours: Double?

        @Flag(help: "Call Apple and report what would change, but write nothing.")
        var dryRun = false

        @OptionGroup var output: OutputOptions

        func validate() throws {
            if let now, ISO8601.parse(now) == nil {
                throw ValidationError("--now must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(now)'.")
            }
        }

        func run() async throws {
            let settings = try await storeOptions.settings()
            let database = try storeOptions.databasePath(settings)
            let appStore = try self.appStore.resolve(settings)
            let output = try self.output.resolve(settings)
            let expiredWithinHours = try settings.double(self.expiredWithinHours, "expired_within_hours", default: 48)
            let expiringWithinHours = try settings.double(self.expiringWithinHours, "expiring_within_hours", default: 24)
            guard expiredWithinHours >= 0, expiringWithinHours >= 0 else { throw usageError("selection windows cannot be negative.") }
            let windows = SelectionWindows(
                nearExpiryBefore: .milliseconds(Int64(expiredWithinHours * 3_600_000)),
                nearExpiryAfter: .milliseconds(Int64(expiringWithinHours * 3_600_000)))
            let command = PollCommand(
                mode: .nightly, database: database, appStore: appStore, output: output, nowMs: ISO8601.milliseconds(now),
                dryRun: dryRun, maxRate: nil,
                selectionOptions: ["expired_within_hours": String(expiredWithinHours), "expiring_within_hours": String(expiringWithinHours)])
            try await command.execute { store, start in
                // A dry run writes nothing, not even to the run history.
                let runID = dryRun ? nil : try await store.startRun(start)
                return PollCommand.Plan(selection: .nightly(windows), runID: runID)
            }
        }
    }
}
