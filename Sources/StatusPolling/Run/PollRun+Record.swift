import Logging

extension PollRun {
    /// Writes one result (unless dry) and counts it. A write that fails is counted as a
    /// `store_error` failure; the run goes on with the next row.
    func record(_ result: RowResult, into report: inout RunReport) async {
        report.selected += 1
        report.requests += result.stats.requests
        report.retries += result.stats.retries
        let row = result.row
        var rowLogger = logger
        rowLogger[metadataKey: "subscription.id"] = "\(row.id)"
        do {
            switch result.decision {
            case .fail(let failure):
                report.countFailure(failure)
                rowLogger.notice("verification failed; entitlement kept", metadata: ["reason": "\(failure.reason.rawValue)", "detail": "\(failure.detail)"])
                if !configuration.dryRun {
                    try await store.recordFailure(.init(subscriptionID: row.id, runID: configuration.runID, failure: failure, attemptedAtMs: configuration.nowMs))
                }
            case .adopt(let state, let receipt, let status):
                let written: VerifiedWriteResult
                if configuration.dryRun {
                    written = try await dryRunOutcome(row: row, state: state)
                } else {
                    written = try await store.recordVerified(.init(
                        subscriptionID: row.id, runID: configuration.runID, receiptSent: row.latestReceipt, state: state, latestReceipt: receipt,
                        appleStatus: status, verifiedAtMs: configuration.nowMs))
                }
                switch written {
                case .written(let previous):
                    report.verified += 1
                    let transition = SubscriptionTransition.between(previous, state, at: configuration.nowMs)
                    report.transitions[transition, default: 0] += 1
                    if transition == .unchanged { report.unchanged += 1 } else { report.updated += 1 }
                    if transition != .unchanged {
                        rowLogger.info("subscription changed", metadata: [
                            "transition": "\(transition.rawValue)",
                            "entitlement": "\(state.entitlement(at: configuration.nowMs).rawValue)",
                        ])
                    }
                case .conflict(let owner):
                    let failure = VerificationFailure(.conflict, "original_transaction_id \(state.originalTransactionID ?? "") belongs to subscription \(owner)", appleStatus: status)
                    report.countFailure(failure)
                    rowLogger.warning("receipt belongs to another subscription; nothing granted", metadata: ["owner": "\(owner)"])
                case .superseded:
                    report.verified += 1
                    report.superseded += 1
                case .missing:
                    report.superseded += 1
                }
            }
        } catch {
            let failure = VerificationFailure(.storeError, "the result could not be written: \(error)")
            report.countFailure(failure)
            rowLogger.error("could not write the result", metadata: ["error": "\(error)"])
        }
    }

    /// What the store would have done, read without writing.
    private func dryRunOutcome(row: SubscriptionRow, state: SubscriptionState) async throws -> VerifiedWriteResult {
        if row.state.originalTransactionID == nil, let otid = state.originalTransactionID,
            let owner = try await store.subscriptionID(owning: otid), owner != row.id
        {
            return .conflict(owner: owner)
        }
        return .written(previous: row.state)
    }
}

/// Reads the selection one page at a time, keyed by `id`, so rows written during the run never
/// shift the pages and at most one page is held in memory.
struct SelectionCursor {
    let store: any SubscriptionStore
    let configuration: PollRun.Configuration
    private var page: [SubscriptionRow] = []
    private var index = 0
    private var lastID: Int64
    private var exhausted = false

    init(store: any SubscriptionStore, configuration: PollRun.Configuration) {
        self.store = store
        self.configuration = configuration
        lastID = configuration.resumeAfter
    }

    mutating func next() async throws -> SubscriptionRow? {
        if index == page.count {
            guard !exhausted else { return nil }
            page = try await store.dueSubscriptions(configuration.selection, nowMs: configuration.nowMs, after: lastID, limit: configuration.pageSize)
            index = 0
            exhausted = page.count < configuration.pageSize
            guard let last = page.last else { return nil }
            lastID = last.id
        }
        defer { index += 1 }
        return page[index]
    }
}
