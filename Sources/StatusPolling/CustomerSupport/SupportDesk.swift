import AppStoreBackends
import EntitlementCore

/// The support commands' side of the database: for the transactions Apple answered about, the
/// rows that own their chains and what those rows say. Reads only; an extension writes through
/// ``applyExtension(to:client:requestIdentifier:nowMs:logger:)``, the one apply path.
public struct SupportDesk: Sendable {
    public let store: any PollingStore
    public let bundleID: String

    public init(store: any PollingStore, bundleID: String) {
        self.store = store
        self.bundleID = bundleID
    }

    /// Each chain of `transactions` once, in order of appearance, with the row that owns it and
    /// its newest `historyLimit` audit rows.
    public func chains(of transactions: [VerifiedTransaction], historyLimit: Int = 20) async throws -> [OwnedChain] {
        var seen: Set<String> = []
        var chains: [OwnedChain] = []
        for transaction in transactions {
            guard let id = transaction.originalTransactionID, seen.insert(id).inserted else { continue }
            chains.append(try await chain(id, historyLimit: historyLimit))
        }
        return chains
    }

    /// The row owning `originalTransactionID`, its bookkeeping and newest `historyLimit` audit rows.
    public func chain(_ originalTransactionID: String, historyLimit: Int = 20) async throws -> OwnedChain {
        guard let id = try await store.subscriptionID(owning: originalTransactionID), let row = try await store.subscriptions(ids: [id]).first else {
            return OwnedChain(originalTransactionID: originalTransactionID, row: nil, bookkeeping: nil, history: [])
        }
        let bookkeeping = try await store.subscriptionsWithBookkeeping(userID: row.userID).first { $0.0.id == id }?.1
        let history = try await store.history(userID: row.userID, limit: 1000).filter { $0.subscriptionID == id }.prefix(historyLimit)
        return OwnedChain(originalTransactionID: originalTransactionID, row: row, bookkeeping: bookkeeping, history: Array(history))
    }

    /// Each refund with whether the row of its chain shows it, and the ledger's record of it.
    public func refundLines(_ refunds: [VerifiedTransaction]) async throws -> [RefundLine] {
        var rows: [String: SubscriptionRow?] = [:]
        var lines: [RefundLine] = []
        let held = try await store.ledger(transactionIDs: refunds.map(\.transactionID))
        let ledger = Dictionary(held.map { ($0.transactionID, $0) }, uniquingKeysWith: { first, _ in first })
        for refund in refunds {
            let chainID = refund.originalTransactionID ?? ""
            let record = ledger[refund.transactionID]
            if rows[chainID] == nil { rows[chainID] = try await chain(chainID, historyLimit: 0).row }
            guard let row = rows[chainID] ?? nil else {
                lines.append(RefundLine(transaction: refund, subscriptionID: nil, reflection: .noRow, ledger: record))
                continue
            }
            let reflection: RefundLine.Reflection
            if row.state.transactionID == refund.transactionID {
                reflection = row.state.cancelledAt == nil ? .notYet : .reflected
            } else {
                reflection = .earlierPeriod
            }
            lines.append(RefundLine(transaction: refund, subscriptionID: row.id, reflection: reflection, ledger: record))
        }
        return lines
    }
}
