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
        let query = NotificationQuery(unmatchedOnly: unmatched, sinceMs: since.flatMap(ISO8601.parse).map { Int64($0.timeIntervalSince1970 * 1000) }, userID: userId, limit: last)
        try await storeOptions.withStore(try await storeOptions.settings()) { (store: any SubscriberDirectory, database) in
            let notifications = try await store.notifications(query)
            switch format {
            case .json:
                let rows: [[String: Any]] = notifications.map { n in
                    var o: [String: Any] = [
                        "notification_id": n.id, "version": n.version, "type": n.type, "received_at": Display.time(n.receivedAtMs),
                        "apple_state_at": Display.time(n.appleStateAtMs), "source": n.source, "outcome": n.outcome,
                    ]
                    if let subtype = n.subtype { o["subtype"] = subtype }
                    if let signed = n.signedAtMs { o["signed_at"] = Display.time(signed) }
                    if let chain = n.originalTransactionID { o["original_transaction_id"] = chain }
                    if let token = n.appAccountToken { o["app_account_token"] = token }
                    if let environment = n.environment { o["environment"] = environment }
                    if let id = n.subscriptionID { o["subscription_id"] = id }
                    if let user = n.userID { o["user_id"] = user }
                    if let status = n.appleStatus { o["apple_status"] = status }
                    if let agrees = n.statusAgrees { o["status_agrees"] = agrees }
                    return o
                }
                print(String(decoding: try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self))
            case .text:
                guard !notifications.isEmpty else { return print("no notifications\(unmatched ? " unmatched" : "") in \(database)") }
                print("received (UTC)         v  notification                         outcome            status     original_transaction_id  row       user")
                for n in notifications {
                    print([
                        Display.time(n.receivedAtMs).padded(22), String(n.version), n.name.padded(36), n.outcome.padded(18), Self.status(n).padded(10),
                        (n.originalTransactionID ?? "-").padded(24), (n.subscriptionID.map(String.init) ?? "-").padded(9), n.userID ?? "-",
                    ].joined(separator: " "))
                }
            }
        }
    }

    /// Apple's `status` and whether the row agreed: "1", "5 asked" (the row said otherwise and is
    /// asked again), "-" without one.
    static func status(_ n: StoredNotification) -> String {
        guard let status = n.appleStatus else { return "-" }
        return n.statusAgrees == false ? "\(status) asked" : String(status)
    }
}
