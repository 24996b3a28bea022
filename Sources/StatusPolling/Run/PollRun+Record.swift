import Logging

extension PollRun {
    /// One row after the writer: what was decided and what the store did with it.
    struct WrittenRow: Sendable {
        enum Outcome: Sendable {
            /// The failure was recorded in the bookkeeping (or would be, in a dry run).
            case failed(VerificationFailure)
            /// The verified state went to the store, which answered `written`.
            case verified(SubscriptionState, status: UpstreamStatus, written: VerifiedWriteResult)
            /// The store could not write the row; its entitlement is untouched.
            case storeError(String)
        }
        var row: SubscriptionRow
        var stats: StatusLookup.Stats
        var outcome: Outcome
    }

    /// Writes one batch (unless dry) in one transaction with the run's checkpoint. When the batch
    /// fails because of one row (a constraint), each row is tried alone, so one bad row does not
    /// cost its neighbours; a row that still fails is counted as a `store_error` and the run goes on.
    /// When the database itself fails (a full disk, a file made read-only, a lock held too long),
    /// nothing of the batch was written and the error comes back to end the run.
    func write(_ batch: [RowResult], checkpoint: Int64) async -> (rows: [WrittenRow], fatal: StoreError?) {
        if configuration.dryRun { return (await dryRunOutcomes(batch), nil) }
        let mark = configuration.runID.map { (runID: $0, through: checkpoint) }
        do {
            let outcomes = try await store.write(ResultBatch(batch.map(storeResult), checkpoint: mark))
            return (zip(batch, outcomes).map { written($0, $1) }, nil)
        } catch let error as StoreError {
            logger.error("the database failed; the run stops", metadata: ["rows": "\(batch.count)", "error": "\(error)"])
            return (batch.map { storeError($0, error) }, error)
        } catch {
            guard batch.count > 1 else { return ([storeError(batch[0], error)], nil) }
            logger.warning("a batch could not be written; writing its rows one by one", metadata: ["rows": "\(batch.count)", "error": "\(error)"])
        }
        var rows: [WrittenRow] = []
        for result in batch {
            do {
                rows.append(written(result, try await store.write(ResultBatch([storeResult(result)]))[0]))
            } catch {
                rows.append(storeError(result, error))
            }
        }
        if let mark { _ = try? await store.write(ResultBatch([], checkpoint: mark)) }
        return (rows, nil)
    }

    /// The run as the trail names it.
    private var provenance: Provenance {
        if case .backfill = configuration.selection, let runID = configuration.runID { return .backfill(runID: runID) }
        return .poll(runID: configuration.runID)
    }

    private func storeResult(_ result: RowResult) -> ResultBatch.Result {
        let row = result.row
        switch result.decision {
        case .fail(let failure):
            return .failed(.init(subscriptionID: row.id, provenance: provenance, failure: failure, attemptedAtMs: configuration.nowMs))
        case .adopt(let state, let otherChains, let receipt, let status):
            return .verified(.init(
                subscriptionID: row.id, provenance: provenance, receiptSent: row.latestReceipt, state: state, otherChains: otherChains, latestReceipt: receipt,
                upstreamStatus: status, verifiedAtMs: configuration.nowMs))
        }
    }

    private func written(_ result: RowResult, _ outcome: VerifiedWriteResult?) -> WrittenRow {
        switch result.decision {
        case .fail(let failure):
            return WrittenRow(row: result.row, stats: result.stats, outcome: .failed(failure))
        case .adopt(let state, _, _, let status):
            // The store answers for every verified result.
            return WrittenRow(row: result.row, stats: result.stats, outcome: .verified(state, status: status, written: outcome ?? .missing))
        }
    }

    private func storeError(_ result: RowResult, _ error: any Error) -> WrittenRow {
        WrittenRow(row: result.row, stats: result.stats, outcome: .storeError("\(error)"))
    }

    /// What the store would have done: the same plan, on the row as read and the chains' owners
    /// looked up, without writing.
    private func dryRunOutcomes(_ batch: [RowResult]) async -> [WrittenRow] {
        var rows: [WrittenRow] = []
        for result in batch {
            let planned = storeResult(result)
            guard case .verified(let update) = planned else {
                rows.append(written(result, nil))
                continue
            }
            do {
                var owners: [String: Int64] = [:]
                if update.state.originalTransactionID != result.row.state.originalTransactionID {
                    for otid in ([update.state] + update.otherChains).compactMap(\.originalTransactionID) {
                        owners[otid] = try await store.subscriptionID(owning: otid)
                    }
                }
                let row = result.row
                let plan = RowUpdatePlan(planned, current: .init(userID: row.userID, latestReceipt: row.latestReceipt, state: row.state), ownerOf: { owners[$0] })
                rows.append(written(result, plan.result))
            } catch {
                rows.append(storeError(result, error))
            }
        }
        return rows
    }

    /// Counts one written row in the report and logs what an operator needs: failures and
    /// conflicts at notice and above; changes at debug (the audit trail holds every change).
    func count(_ written: WrittenRow, into report: inout RunReport) {
        report.selected += 1
        if case .nightly(let windows) = configuration.selection,
            windows.bounds(nowMs: configuration.nowMs).selectsOnlyAsLapsed(written.row.state, receiptUploaded: written.row.receiptUploaded)
        {
            report.selectedLapsed += 1
        }
        report.requests += written.stats.requests
        report.retries += written.stats.retries
        let id = written.row.id
        switch written.outcome {
        case .failed(let failure):
            report.countFailure(failure)
            logger.notice("verification failed; entitlement kept", metadata: [
                "subscription.id": "\(id)", "reason": "\(failure.reason.rawValue)", "detail": "\(failure.detail)",
            ])
        case .storeError(let error):
            report.countFailure(VerificationFailure(.storeError, "the result could not be written: \(error)"))
            logger.error("could not write the result", metadata: ["subscription.id": "\(id)", "error": "\(error)"])
        case .verified(let decided, let status, let result):
            var state = decided
            switch result {
            case .written(let previous, let adopted, let discovered):
                state = adopted ?? decided
                report.verified += 1
                report.discovered += discovered
                let transition = SubscriptionTransition.between(previous, state, at: configuration.nowMs)
                report.transitions[transition, default: 0] += 1
                if transition == .unchanged { report.unchanged += 1 } else { report.updated += 1 }
                if transition != .unchanged {
                    logger.debug("subscription changed", metadata: [
                        "subscription.id": "\(id)", "transition": "\(transition.rawValue)",
                        "entitlement": "\(state.entitlement(at: configuration.nowMs).rawValue)",
                    ])
                }
            case .conflict(let owner):
                report.countFailure(.conflict(chain: state.originalTransactionID ?? "", owner: owner, upstreamStatus: status))
                logger.warning("receipt belongs to another subscription; nothing granted", metadata: ["subscription.id": "\(id)", "owner": "\(owner)"])
            case .superseded, .stale:
                // Apple answered, but the web service replaced the receipt meanwhile, or another
                // writer already recorded newer Apple data: nothing changed.
                report.verified += 1
                report.superseded += 1
            case .missing:
                report.superseded += 1
            }
        }
    }
}
