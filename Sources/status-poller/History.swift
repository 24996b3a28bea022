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
            try await storeOptions.withStore(try await storeOptions.settings()) { store, database in
                let events = try await store.history(userID: userID)
                if format == .json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                    let rows = events.map { EventJSON($0) }
                    return print(String(decoding: try encoder.encode(rows), as: UTF8.self))
                }
                guard !events.isEmpty else {
                    let rows = try await store.subscriptions(userID: userID)
                    return print(rows.isEmpty ? "no subscription for user \(userID)" : "no entitlement change recorded yet for user \(userID)")
                }
                for event in events {
                    print("\(Display.time(event.atMs))  \(event.reason.padded(22)) \(event.entitlementBefore) → \(event.entitlementAfter)   subscription \(event.subscriptionID), run \(event.runID.map(String.init) ?? "-"), Apple status \(event.appleStatus.map(String.init) ?? "-")")
                    for line in Self.changes(event.old, event.new) { print("      \(line)") }
                }
            }
        }

        /// "column: old → new" for each contract column that changed; times shown as dates.
        static func changes(_ old: SubscriptionState, _ new: SubscriptionState) -> [String] {
            var lines: [String] = []
            func show<V: Equatable>(_ name: String, _ a: V?, _ b: V?, _ render: (V) -> String = { "\($0)" }) {
                if a != b { lines.append("\(name): \(a.map(render) ?? "NULL") → \(b.map(render) ?? "NULL")") }
            }
            show("original_transaction_id", old.originalTransactionID, new.originalTransactionID)
            show("product_id", old.productID, new.productID)
            show("environment", old.environment, new.environment)
            show("expires_at", old.expiresAt, new.expiresAt, Display.time)
            show("grace_period_expires_at", old.gracePeriodExpiresAt, new.gracePeriodExpiresAt, Display.time)
            show("is_in_billing_retry", old.isInBillingRetry, new.isInBillingRetry)
            show("auto_renew_status", old.autoRenewStatus, new.autoRenewStatus)
            show("auto_renew_product_id", old.autoRenewProductID, new.autoRenewProductID)
            show("expiration_intent", old.expirationIntent, new.expirationIntent)
            show("cancelled_at", old.cancelledAt, new.cancelledAt, Display.time)
            return lines
        }
    }
}
