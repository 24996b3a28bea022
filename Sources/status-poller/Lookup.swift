import AppStoreBackends
import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

extension StatusPoller {
    /// `status-poller lookup --order-id ID | --transaction-id ID`: support's first question.
    struct Lookup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find a customer by the order id on Apple's e-mailed receipt (or a transaction id): Apple's signed transactions, the row that owns them, its entitlement and recent history.",
            discussion: """
                Asks Apple (Look Up Order ID, or Get Transaction Info) with the App Store Server API's credentials; every \
                signed transaction is verified before it is shown. Exit 0 when Apple knows the order and a row here owns its \
                subscription; 1 when Apple does not know the order or transaction for this app (a typo, another app's \
                receipt) or no row owns it; 2 usage; 3 when Apple could not be asked or its answer not trusted.
                """)

        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var appStore: AppStoreOptions
        @OptionGroup(title: "App Store Server API") var serverAPI: ServerAPIOptions

        @Option(name: .customLong("order-id"), help: "The order id on the receipt Apple e-mailed the customer (e.g. MK5TTTVWJH).")
        var orderID: String?

        @Option(name: .customLong("transaction-id"), help: "A transaction id (or original transaction id) instead of an order id.")
        var transactionID: String?

        @Option(help: "Output: text or json.")
        var format: ReportFormat = .text

        @Option(help: "The clock for the entitlement, ISO 8601 (default: now).")
        var now: String?

        /// Apple's limit for Look Up Order ID (Get Transaction Info allows 50).
        static let rate = 10

        func validate() throws {
            guard (orderID == nil) != (transactionID == nil) else { throw ValidationError("give exactly one of --order-id and --transaction-id.") }
            if let orderID, orderID.isEmpty || !orderID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                throw ValidationError("--order-id is the letters and digits on Apple's receipt (e.g. MK5TTTVWJH), got '\(orderID)'.")
            }
            if let transactionID, transactionID.isEmpty || !transactionID.allSatisfy({ $0.isASCII && $0.isNumber }) {
                throw ValidationError("--transaction-id is Apple's numeric transaction id, got '\(transactionID)'.")
            }
            if let now, ISO8601.parse(now) == nil { throw ValidationError("--now must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(now)'.") }
        }

        func run() async throws {
            let nowMs = ISO8601.milliseconds(now)
            let what = orderID.map { "order \($0)" } ?? "transaction \(transactionID!)"
            let (transactions, chains) = try await SupportSession.run(
                store: storeOptions, appStore: appStore, serverAPI: serverAPI, endpointRate: Self.rate, purpose: "the \(what) is looked up"
            ) { session -> ([VerifiedTransaction], [OwnedChain]) in
                let transactions: [VerifiedTransaction]
                if let orderID {
                    transactions = try await session.client.lookUpOrder(orderID, logger: session.logger)
                } else {
                    transactions = try await session.client.transactionInfo(transactionID!, logger: session.logger).map { [$0] } ?? []
                }
                return (transactions, try await session.desk.chains(of: transactions))
            }
            if format == .json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                encoder.keyEncodingStrategy = .convertToSnakeCase
                let json = LookupJSON(
                    order_id: orderID, transaction_id: transactionID, found: !transactions.isEmpty, transactions: transactions,
                    chains: chains.map { ChainJSON($0, nowMs: nowMs) })
                print(String(decoding: try encoder.encode(json), as: UTF8.self))
            } else {
                print(Self.text(what, transactions, chains, nowMs: nowMs).joined(separator: "\n"))
            }
            if transactions.isEmpty {
                FileHandle.standardError.write(Data("Apple knows no \(what) for this app, in production or the sandbox: check the id on the customer's receipt (it may be another app's).\n".utf8))
                throw ExitCode(1)
            }
            if chains.contains(where: { $0.row == nil }) { throw ExitCode(1) }
        }

        static func text(_ what: String, _ transactions: [VerifiedTransaction], _ chains: [OwnedChain], nowMs: Int64) -> [String] {
            guard !transactions.isEmpty else { return ["\(what): not found"] }
            var lines = ["\(what): \(transactions.count) transaction(s) signed by Apple, verified (\(transactions[0].environment))"]
            for t in transactions { lines.append("  " + transactionLine(t)) }
            for chain in chains {
                lines.append("")
                guard let row = chain.row else {
                    lines.append("chain \(chain.originalTransactionID): no row here owns it — the customer's app has not uploaded a receipt with it (enrol one: status-poller enroll).")
                    continue
                }
                lines.append("chain \(chain.originalTransactionID):")
                lines += RowText.lines(row, chain.bookkeeping, nowMs: nowMs)
                lines.append(chain.history.isEmpty ? "  no change recorded yet" : "  recent history (newest first):")
                for event in chain.history {
                    lines.append("    \(Display.time(event.atMs))  \(event.reason.padded(22)) \(event.entitlementBefore) → \(event.entitlementAfter)   \(event.source ?? "-")")
                }
            }
            return lines
        }

        /// One transaction in a line: id, product, reason, dates, and a refund if any.
        static func transactionLine(_ t: VerifiedTransaction) -> String {
            var line = "transaction \(t.transactionID) of chain \(t.originalTransactionID ?? "-")  \(t.productID ?? "-")  \(t.transactionReason ?? "-")"
            line += "  purchased \(Display.optionalTime(t.purchaseDateMs))  expires \(Display.optionalTime(t.expiresDateMs))"
            if let revoked = t.revocationDateMs {
                line += "  REFUNDED \(Display.time(revoked)) (\(t.revocationType ?? "refund"), reason \(t.revocationReason.map(String.init) ?? "-"))"
            }
            return line
        }
    }
}

/// `lookup --format json`.
struct LookupJSON: Encodable {
    var order_id: String?
    var transaction_id: String?
    var found: Bool
    var transactions: [VerifiedTransaction]
    var chains: [ChainJSON]
}
