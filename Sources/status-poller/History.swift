import ArgumentParser
import Foundation
import StatusPolling

extension StatusPoller {
    /// `status-poller history --user-id U`: every change of a user's entitlement, newest first.
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the audit trail of a user's subscriptions, newest first: what changed, when, why, in which run.")

        @OptionGroup var storeOptions: StoreOptions

        @Option(name: .customLong("user-id"), help: "The web service's user id.")
        var userID: String

        @Option(help: "Output: text or json.")
        var format: ReportFormat = .text

        func run() async throws {
            try await storeOptions.withStore(try await storeOptions.settings()) { (store: any PollingStore, database) in
                let events = try await store.history(userID: userID)
                // The user's notifications, newest first: their names for the changes they brought.
                let notifications = try await store.notifications(NotificationQuery(userID: userID, limit: 1000))
                let names = Dictionary(notifications.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
                if format == .json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                    let rows = events.map { EventJSON($0, notificationType: $0.notificationID.flatMap { names[$0] }) }
                    return print(String(decoding: try encoder.encode(rows), as: UTF8.self))
                }
                if events.isEmpty {
                    let rows = try await store.subscriptions(userID: userID)
                    guard !rows.isEmpty else { return print("no subscription for user \(userID)") }
                    print("no entitlement change recorded yet for user \(userID)")
                }
                for event in events { print(event.lines(names: names).joined(separator: "\n")) }
                // Beside the changes, every notification about the user's rows, those that changed
                // nothing (unchanged, stale, another environment) included.
                // A refund request (CONSUMPTION_REQUEST) shows the answer sent to Apple under it.
                guard !notifications.isEmpty else { return }
                let requests = try await store.consumptionRequests(ConsumptionQuery(userID: userID))
                let answers = Dictionary(requests.map { ($0.notificationID, $0) }, uniquingKeysWith: { first, _ in first })
                print("\nnotifications received (newest first):")
                for n in notifications.prefix(50) {
                    print("\(Display.time(n.receivedAtMs))  \(n.name.padded(36)) \(n.outcome.padded(18)) subscription \(n.subscriptionID.map(String.init) ?? "-"), V\(n.version) \(n.source), id \(n.id)")
                    if let answer = answers[n.id] { print("      refund request: \(answer.answerText)") }
                }
            }
        }
    }
}
