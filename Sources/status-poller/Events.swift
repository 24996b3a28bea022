import ArgumentParser

extension StatusPoller {
    /// `status-poller events`: the outbound event feed to the web service (docs/EVENTS.md).
    struct Events: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deliver each subscriber's access changes to the web service as signed webhooks (Standard Webhooks), list and replay them.",
            subcommands: [EventsDeliver.self, EventsList.self, EventsReplay.self, EventsSecret.self])
    }
}
