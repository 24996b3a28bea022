import ArgumentParser
import Foundation
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
            try await storeOptions.withStore(try await storeOptions.settings()) { store, database in
                let nowMs = ISO8601.milliseconds(now)
                let rows = try await store.subscriptionsWithBookkeeping(userID: userID)
                guard !rows.isEmpty else {
                    FileHandle.standardError.write(Data("no subscription for user \(userID) in \(database)\n".utf8))
                    throw ExitCode(1)
                }
                for (row, bookkeeping) in rows {
                    let state = row.state
                    let entitlement = state.entitlement(at: nowMs)
                    print("subscription \(row.id)  user \(row.userID)  →  \(entitlement.rawValue), \(entitlement.isEntitled ? "ENTITLED" : "not entitled") at \(Display.time(nowMs))")
                    let fields: [(String, String)] = [
                        ("original_transaction_id", state.originalTransactionID ?? "NULL"),
                        ("product_id", state.productID ?? "NULL"),
                        ("environment", state.environment ?? "NULL"),
                        ("expires_at", Display.optionalTime(state.expiresAt)),
                        ("grace_period_expires_at", Display.optionalTime(state.gracePeriodExpiresAt)),
                        ("is_in_billing_retry", state.isInBillingRetry ? "1" : "0"),
                        ("auto_renew_status", state.autoRenewStatus.map { $0 ? "1" : "0" } ?? "NULL"),
                        ("auto_renew_product_id", state.autoRenewProductID ?? "NULL"),
                        ("expiration_intent", state.expirationIntent.map(String.init) ?? "NULL"),
                        ("cancelled_at", Display.optionalTime(state.cancelledAt)),
                    ]
                    for (name, value) in fields { print("  \(name.padded(24)) \(value)") }
                    print("  last verified            \(Display.optionalTime(bookkeeping.lastVerifiedAt))")
                    print("  last attempt             \(Display.optionalTime(bookkeeping.lastAttemptAt))\(bookkeeping.lastErrorReason.map { "  failed: \($0) — \(bookkeeping.lastError ?? "")" } ?? "")")
                    if bookkeeping.consecutiveFailures > 0 { print("  consecutive failures     \(bookkeeping.consecutiveFailures)") }
                    if row.receiptUploaded { print("  a new receipt was uploaded; the next run verifies it") }
                }
            }
        }
    }
}
