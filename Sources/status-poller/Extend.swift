import ArgumentParser
import Foundation
import StatusPolling

extension StatusPoller {
    /// `status-poller extend …`: renewal-date extensions after an outage, one subscriber or all.
    struct Extend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Extend renewal dates through Apple (one subscription, or every active subscriber of a product) and follow Apple's mass requests.",
            subcommands: [ExtendRenewal.self, ExtendStatus.self], defaultSubcommand: ExtendRenewal.self)
    }
}
