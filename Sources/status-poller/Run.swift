import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

extension StatusPoller {
    /// `status-poller run`: the nightly job.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify every subscription whose access may be changing and write back Apple's answer.",
            discussion: """
                The shared secret is read from the APPSTORE_SHARED_SECRET environment variable or from \
                --shared-secret-file, never from an argument; the In-App Purchase key (--backend server-api or \
                auto) from APPSTORE_PRIVATE_KEY or --private-key-file, likewise. When neither is given, both are read \
                from systemd's credentials: shared-secret and private-key in $CREDENTIALS_DIRECTORY (LoadCredential=). \
                Behind an HTTP proxy, set HTTPS_PROXY (http://[USER:PASSWORD@]HOST:PORT; HTTP_PROXY for http:// URLs) \
                and NO_PROXY for hosts reached directly.
                """ + "\n\n" + RunExitCode.helpTable)

        @OptionGroup var storeOptions: StoreOptions

        @OptionGroup(title: "Several workers (PostgreSQL)") var workerOptions: WorkerOptions

        @OptionGroup var appStore: AppStoreOptions

        @OptionGroup(title: "App Store Server API") var serverAPI: ServerAPIOptions

        @Option(help: "The run's clock as ISO 8601 (e.g. 2026-11-22T03:00:00Z). Default: now.")
        var now: String?

        @Option(help: ArgumentHelp("Select rows that expired at most this many hours ago (default: \(Limits.hours(SelectionWindows.defaultNearExpiryBefore)))."))
        var expiredWithinHours: Double?

        @Option(help: ArgumentHelp("Select rows that expire within this many hours (default: \(Limits.hours(SelectionWindows.defaultNearExpiryAfter)))."))
        var expiringWithinHours: Double?

        @Option(help: ArgumentHelp("Ask lapsed rows (expired, not in billing retry) again until this many days after expiry, \(LapsedSweep.allowedWithinDays.lowerBound)…\(LapsedSweep.allowedWithinDays.upperBound) (default: \(Limits.days(LapsedSweep.defaultWithin)))."))
        var lapsedWithin: Int?

        @Option(help: ArgumentHelp("Ask each lapsed row every this many days, spread over the nights; 0 turns the sweep off (default: \(Limits.days(LapsedSweep.defaultEvery)))."))
        var lapsedEvery: Int?

        @Option(help: ArgumentHelp("Skip rows whose Apple data was recorded this recently (a notification, an earlier run) unless a receipt was uploaded or their expiry passed since: a duration such as 12h or 90m, or 0 to ask every row in a window (default: \(Limits.hours(SelectionWindows.defaultFreshWithin))h)."))
        var freshWithin: String?

        @Flag(help: "Call Apple and report what would change, but write nothing.")
        var dryRun = false

        @Option(help: ArgumentHelp("Read Apple's notification history first when Server API credentials are configured: on or off (default: on)."))
        var notificationHistory: OnOff?

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
            let serverAPI = try self.serverAPI.resolve(settings, allowInsecureHTTP: appStore.allowInsecureHTTP)
            let output = try self.output.resolve(settings)
            let expiredWithinHours = try settings.double(self.expiredWithinHours, "expired_within_hours", default: SelectionWindows.defaultNearExpiryBefore.totalSeconds / 3600)
            let expiringWithinHours = try settings.double(self.expiringWithinHours, "expiring_within_hours", default: SelectionWindows.defaultNearExpiryAfter.totalSeconds / 3600)
            guard expiredWithinHours >= 0, expiringWithinHours >= 0 else { throw usageError("selection windows cannot be negative.") }
            let lapsed = try LapsedSweepSetting.resolve(
                within: settings.int(lapsedWithin, "lapsed_within", default: Limits.days(LapsedSweep.defaultWithin)),
                every: settings.int(lapsedEvery, "lapsed_every", default: Limits.days(LapsedSweep.defaultEvery)))
            let freshWithin = try Self.freshWithin(settings.string(self.freshWithin, "fresh_within"))
            let windows = SelectionWindows(
                nearExpiryBefore: .milliseconds(Int64(expiredWithinHours * 3_600_000)),
                nearExpiryAfter: .milliseconds(Int64(expiringWithinHours * 3_600_000)), lapsed: lapsed.sweep, freshWithin: freshWithin)
            let selection = [
                "expired_within_hours": String(expiredWithinHours), "expiring_within_hours": String(expiringWithinHours),
                "lapsed_sweep": lapsed.recorded, "fresh_within_seconds": String(Int(freshWithin?.totalSeconds ?? 0)),
            ]
            var job = PollJob.Configuration(
                selection: .nightly(windows), bundleID: appStore.bundleID, nowMs: ISO8601.milliseconds(now), concurrency: appStore.concurrency,
                dryRun: dryRun, recordedOptions: appStore.recorded.merging(selection) { $1 },
                circuitBreaker: appStore.breaker, deadline: appStore.deadline, overload: appStore.overload)
            job.retention = try RetentionSettings.policy(settings)
            try await PollCommand(
                database: database, worker: try workerOptions.settings(settings), writesOutbox: storeOptions.writesOutbox(settings), appStore: appStore, output: output, serverAPI: serverAPI, job: job,
                catchesUpFirst: try settings.onOff(notificationHistory, "notification_history", default: .on) == .on
            ).execute()
        }

        /// `--fresh-within`: a duration, `0` (or `off`) for none, the default when not set.
        static func freshWithin(_ text: String?) throws -> Duration? {
            guard let text else { return SelectionWindows.defaultFreshWithin }
            if ["0", "off"].contains(text.trimmingCharacters(in: .whitespaces)) { return nil }
            guard let duration = Duration(text: text) else {
                throw usageError("--fresh-within must be a duration such as 12h or 90m (at most 7 days), or 0 to ask every row, got '\(text)'.")
            }
            return duration
        }
    }
}
