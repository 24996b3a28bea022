import ArgumentParser

extension StatusPoller {
    /// `status-poller notifications`: App Store Server Notifications into the same rows as the poll.
    struct Notifications: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Receive App Store Server Notifications (V2 and V1) into the same rows the nightly run keeps, and list them.",
            subcommands: [NotificationsServe.self, NotificationsCatchUp.self, NotificationsTest.self, NotificationsList.self])
    }
}
