import ArgumentParser
import BuildInfo
import Foundation
import PollerCommandLine
import StatusPolling

/// The `status-poller` command: parses, configures, calls the library, maps the outcome to an exit code.
@main
struct StatusPoller: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status-poller",
        abstract: "Keeps App Store auto-renewable subscriptions current by replaying stored receipts against verifyReceipt.",
        discussion: RunExitCode.helpTable,
        version: BuildInfo.versionText,
        subcommands: [
            Run.self, Backfill.self, Migrate.self, Runs.self, History.self, Report.self, Show.self, Enroll.self, Lookup.self, Refunds.self, Extend.self, Consumption.self, Notifications.self, Events.self, Prune.self,
        ])

    /// Runs the command, but reports usage errors with exit code 2 (`CommandMain`).
    static func main() async {
        await CommandMain.run(Self.self)
    }
}
