import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

extension StatusPoller {
    /// `status-poller show --user-id U`: a user's rows and the entitlement the web service sees.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a user's subscriptions, their entitlement now, and the poller's bookkeeping.")

        @OptionGroup var storeOptions: StoreOptions

        @Option(name: .customLong("user-id"), help: "The web service's user id.")
        var userID: String

        @Option(help: "The clock for the entitlement, ISO 8601 (default: now, as the web service's view).")
        var now: String?

        func run() async throws {
            try await storeOptions.withStore(try await storeOptions.settings()) { (store: any SubscriberDirectory, database) in
                let nowMs = ISO8601.milliseconds(now)
                let rows = try await store.subscriptionsWithBookkeeping(userID: userID)
                guard !rows.isEmpty else {
                    FileHandle.standardError.write(Data("no subscription for user \(userID) in \(database)\n".utf8))
                    throw ExitCode(1)
                }
                for (row, bookkeeping) in rows {
                    for line in RowText.lines(row, bookkeeping, nowMs: nowMs) { print(line) }
                }
            }
        }
    }
}
