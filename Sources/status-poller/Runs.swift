import ArgumentParser
import StatusPolling

extension StatusPoller {
    /// `status-poller runs`: the run history, newest first.
    struct Runs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List past runs, newest first: when, what, counts by outcome, exit code.")

        @OptionGroup var storeOptions: StoreOptions

        @Option(help: "How many runs.")
        var last = 20

        @Option(help: "Output: text or json.")
        var format: ReportFormat = .text

        func run() async throws {
            try await storeOptions.withStore(try await storeOptions.settings()) { (store: any SubscriptionTrail, database) in
                let runs = try await store.runs(last: max(1, last))
                switch format {
                case .json: print(try RunRecord.json(runs))
                case .text: print(RunRecord.table(runs, database: database).joined(separator: "\n"))
                }
            }
        }
    }
}
