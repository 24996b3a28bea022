import AppStoreBackends
import ArgumentParser
import EntitlementCore
import Foundation
import PollerCommandLine
import StatusPolling

extension StatusPoller {
    /// `status-poller refunds --user-id U | --original-transaction-id X`: Apple's refund history of
    /// a customer, and whether the rows show each refund.
    struct Refunds: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a customer's refunds from Apple (Get Refund History), with dates and reasons, and whether the row shows each.",
            discussion: """
                Each refunded transaction Apple signed is verified, then compared with the row that owns its chain: \
                `reflected` (the refunded period is the row's current one and cancelled_at holds it), `not_yet` (the next \
                run or a notification writes it), `earlier_period` (a past period: no access to take back), `no_row`; \
                and what the ledger holds of it: revoked at when, first seen by which path (poll, backfill, notification, \
                history, extended), or not in the ledger. Nothing is written. \
                Exit 0 when Apple answered (no refund included); 1 when the user has no row with a subscription, or \
                Apple does not know the id; 2 usage; 3 when Apple could not be asked or its answer not trusted.
                """)

        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var appStore: AppStoreOptions
        @OptionGroup(title: "App Store Server API") var serverAPI: ServerAPIOptions

        @Option(name: .customLong("user-id"), help: "The web service's user id: Apple is asked with the original transaction id of the user's first row that has one.")
        var userID: String?

        @Option(name: .customLong("original-transaction-id"), help: "Any transaction id of the customer (an original transaction id, typically).")
        var originalTransactionID: String?

        @Option(help: "Output: text or json.")
        var format: ReportFormat = .text

        /// Apple's limit for Get Refund History.
        static let rate = 10

        func validate() throws {
            guard (userID == nil) != (originalTransactionID == nil) else { throw ValidationError("give exactly one of --user-id and --original-transaction-id.") }
            if let originalTransactionID, originalTransactionID.isEmpty || !originalTransactionID.allSatisfy({ $0.isASCII && $0.isNumber }) {
                throw ValidationError("--original-transaction-id is Apple's numeric id, got '\(originalTransactionID)'.")
            }
        }

        func run() async throws {
            let lines = try await SupportSession.run(
                store: storeOptions, appStore: appStore, serverAPI: serverAPI, endpointRate: Self.rate, purpose: "the refund history is read"
            ) { session -> [RefundLine]? in
                var id = originalTransactionID
                var environment: AppStoreEnvironment?
                if let userID {
                    let rows = try await session.desk.store.subscriptions(userID: userID)
                    guard let row = rows.first(where: { $0.state.originalTransactionID != nil }) else {
                        throw exitError(.someFailed, "user \(userID) has no row with an original transaction id yet (a run verifies a new row first); nothing to ask Apple with.")
                    }
                    id = row.state.originalTransactionID
                    environment = row.state.environment.flatMap(AppStoreEnvironment.init(rawValue:))
                }
                guard let refunds = try await session.client.refundHistory(id!, in: environment, logger: session.logger) else { return nil }
                return try await session.desk.refundLines(refunds)
            }
            guard let lines else {
                throw exitError(.someFailed, "Apple knows no transaction \(originalTransactionID ?? "") for this app, in production or the sandbox.")
            }
            if format == .json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                encoder.keyEncodingStrategy = .convertToSnakeCase
                let rows = lines.map {
                    RefundJSON(transaction: $0.transaction, subscriptionID: $0.subscriptionID, row: $0.reflection.rawValue, ledger: $0.ledger)
                }
                return print(String(decoding: try encoder.encode(rows), as: UTF8.self))
            }
            print("\(lines.count) refund(s) in Apple's history" + (lines.isEmpty ? "." : " (oldest first):"))
            for line in lines {
                print("  " + Lookup.transactionLine(line.transaction))
                print("      row: \(line.reflection.rawValue)\(line.subscriptionID.map { ", subscription \($0)" } ?? "")")
                print("      ledger: " + Self.ledgerLine(line.ledger))
            }
        }

        /// What the ledger holds of a refunded transaction, in a line.
        static func ledgerLine(_ record: LedgerRecord?) -> String {
            guard let record else { return "not in the ledger (no answer about it since the ledger began)" }
            var line = record.revokedAtMs.map { "revoked \(Display.time($0))" + (record.revocationType.map { " (\($0))" } ?? "") } ?? "not revoked (a reversal, or not yet seen)"
            line += ", first seen by \(record.firstSource) \(Display.time(record.firstSeenAtMs))"
            if let price = record.price { line += ", price \(Display.milliunits(price)) \(record.currency ?? "")" }
            return line
        }
    }
}

/// One line of `refunds --format json`.
struct RefundJSON: Encodable {
    var transaction: VerifiedTransaction
    var subscriptionID: Int64?
    var row: String
    /// The ledger's record; null when the ledger does not hold the transaction.
    var ledger: LedgerRecord?
}
