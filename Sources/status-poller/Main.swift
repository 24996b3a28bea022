import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

/// The `status-poller` command: parses, configures, calls the library, maps the outcome to an exit code.
@main
struct StatusPoller: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status-poller",
        abstract: "Keeps App Store auto-renewable subscriptions current by replaying stored receipts against verifyReceipt.",
        discussion: """
            Exit codes:
              0  every selected subscription was verified
              1  the run finished but some subscriptions failed (their access is unchanged)
              2  usage or configuration error (bad flag, missing secret, unreadable or unmigrated database)
              3  run aborted (Apple answered 21004, or the database could not be read or stayed locked)
              4  stopped by SIGTERM/SIGINT; what was done is written (a backfill resumes with --resume)
             75  another run holds the database's lock (try again later)
            """,
        subcommands: [Run.self, Backfill.self, Migrate.self, Runs.self, History.self, Show.self, Enroll.self, DemoCommand.self, Simulate.self])

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
