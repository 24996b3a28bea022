import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

/// `status-poller notifications list`: what Apple sent and what each notification did, for support.
struct NotificationsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List received notifications, newest first: when, which, for which chain and row, and what each did (never a payload).")

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Only those no row took (no row owns their chain or app_account_token yet).")
    var unmatched = false

    @Option(help: "Only those received at or after this instant, ISO 8601.")
    var since: String?

    @Option(help: "Only those applied to a row of this user.")
    var userId: String?

    @Option(help: "How many.")
    var last = 50

    @Option(help: "Output: text or json.")
    var format: ReportFormat = .text

    func validate() throws {
        if let since, ISO8601.parse(since) == nil { throw ValidationError("--since must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(since)'.") }
        guard last >= 1 else { throw ValidationError("--last must be at least 1.") }
    }

    func run() async throws {
        let query = NotificationQuery(unmatchedOnly: unmatched, sinceMs: since.flatMap(ISO8601.unixMilliseconds), userID: userId, limit: last)
        try await storeOptions.withStore(try await storeOptions.settings()) { (store: any SubscriberDirectory, database) in
            let notifications = try await store.notifications(query)
            switch format {
            case .json: print(try StoredNotification.json(notifications))
            case .text:
                guard !notifications.isEmpty else { return print("no notifications\(unmatched ? " unmatched" : "") in \(database)") }
                print(([StoredNotification.tableHeader] + notifications.map(\.line)).joined(separator: "\n"))
            }
        }
    }
}
