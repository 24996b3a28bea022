import ArgumentParser
import BuildInfo
import Foundation
import NIOCore
import NIOPosix
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
            Run.self, Backfill.self, Migrate.self, Runs.self, History.self, Report.self, Show.self, Enroll.self, Lookup.self, Refunds.self, Extend.self, Consumption.self, Notifications.self, Events.self, DemoCommand.self, Simulate.self,
        ])

    /// Runs the command, but reports usage errors with exit code 2 (ArgumentParser's default is 64),
    /// as the README and `--help` document.
    static func main() async {
        // Swift concurrency runs on NIO's event loops: an answer read by the HTTP client resumes
        // the task waiting for it on the same thread, without a hop to another pool.
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("error: \(failure.message)\n".utf8))
            Foundation.exit(failure.code.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(Int32(2))
            }
            exit(withError: error)
        }
    }
}
