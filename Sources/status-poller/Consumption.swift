import ArgumentParser
import StatusPolling

extension StatusPoller {
    /// `status-poller consumption …`: Apple's refund requests and the consumption information answered.
    struct Consumption: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer Apple's refund requests (CONSUMPTION_REQUEST) with consumption information, and list them.",
            subcommands: [ConsumptionSend.self, ConsumptionList.self], defaultSubcommand: ConsumptionList.self)
    }
}
