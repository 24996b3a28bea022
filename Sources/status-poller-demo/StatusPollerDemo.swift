import ArgumentParser
import BuildInfo
import PollerCommandLine

/// `status-poller-demo`: the App Store simulator and the demo that plays `status-poller` against it,
/// night after night. A program of its own, so that the `status-poller` a team installs beside its
/// customers' data carries no fake App Store and no keys that sign App Store answers.
@main
struct StatusPollerDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status-poller-demo",
        abstract: "The built-in App Store simulator, and the demo that plays status-poller's nightly run against it.",
        version: BuildInfo.versionText,
        subcommands: [DemoCommand.self, Simulate.self, Notifications.self])

    /// `status-poller-demo notifications`: the receiver harnesses' signed notifications.
    struct Notifications: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write signed V2 notifications for the receiver's harnesses.", subcommands: [NotificationsSimulate.self])
    }

    static func main() async {
        await CommandMain.run(Self.self)
    }
}
