import EntitlementCore
import Logging

extension PollRun {
    /// One row after the writer: what was decided, and the plan the writer applied (or would
    /// have, in a dry run) — the one account of its fate the trail was written from.
    struct WrittenRow: Sendable {
        enum Outcome: Sendable {
            case planned(RowUpdatePlan)
            /// The store could not write the row; its entitlement is untouched.
            case storeError(String)
        }
        var row: SubscriptionRow
        var decision: RowResult.Decision
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
            let plans = try await store.apply(ResultBatch(batch.map(storeResult), checkpoint: mark))
            return (zip(batch, plans).map { written($0, .planned($1)) }, nil)
        } catch let error as StoreError {
            logger.error("the database failed; the run stops", metadata: ["rows": "\(batch.count)", "error": "\(error)"])
            return (batch.map { written($0, .storeError("\(error)")) }, error)
        } catch {
            guard batch.count > 1 else { return ([written(batch[0], .storeError("\(error)"))], nil) }
            logger.warning("a batch could not be written; writing its rows one by one", metadata: ["rows": "\(batch.count)", "error": "\(error)"])
        }
        var rows: [WrittenRow] = []
        for result in batch {
            do {
                rows.append(written(result, .planned(try await store.apply(ResultBatch([storeResult(result)]))[0])))
            } catch {
                rows.append(written(result, .storeError("\(error)")))
            }
        }
        if let mark { _ = try? await store.apply(ResultBatch([], checkpoint: mark)) }
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
        case .adopt(let state, let otherChains, let receipt, let status, let evidence, let transactions):
            return .verified(.init(
                subscriptionID: row.id, provenance: provenance, receiptSent: row.latestReceipt, state: state, otherChains: otherChains, latestReceipt: receipt,
                upstreamStatus: status, verifiedAtMs: configuration.nowMs, evidence: evidence, transactions: transactions))
        }
    }

    private func written(_ result: RowResult, _ outcome: WrittenRow.Outcome) -> WrittenRow {
        WrittenRow(row: result.row, decision: result.decision, stats: result.stats, outcome: outcome)
    }

    /// What the store would have done: the same plan, on the row as read and the chains' owners
    /// looked up, without writing.
    private func dryRunOutcomes(_ batch: [RowResult]) async -> [WrittenRow] {
        var rows: [WrittenRow] = []
        for result in batch {
            let planned = storeResult(result)
            do {
                var owners: [String: Int64] = [:]
                if case .verified(let update) = planned, update.state.originalTransactionID != result.row.state.originalTransactionID {
                    for otid in ([update.state] + update.otherChains).compactMap(\.originalTransactionID) {
                        owners[otid] = try await store.subscriptionID(owning: otid)
                    }
                }
                let row = result.row
                let plan = RowUpdatePlan(planned, current: .init(userID: row.userID, holdsReceiptSent: true, state: row.state), ownerOf: { owners[$0] })
                rows.append(written(result, .planned(plan)))
            } catch {
                rows.append(written(result, .storeError("\(error)")))
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
        case .storeError(let error):
            report.countFailure(VerificationFailure(.storeError, "the result could not be written: \(error)"))
            logger.error("could not write the result", metadata: ["subscription.id": "\(id)", "error": "\(error)"])
        case .planned(let plan):
            if case .fail(let failure) = written.decision {
                report.countFailure(failure)
                logger.notice("verification failed; entitlement kept", metadata: [
                    "subscription.id": "\(id)", "reason": "\(failure.reason.rawValue)", "detail": "\(failure.detail)",
                ])
                return
            }
            switch plan.result {
            case .written(_, _, let discovered)?:
                report.verified += 1
                report.discovered += discovered
                let transition = plan.transition ?? .unchanged
                report.transitions[transition, default: 0] += 1
                if transition == .unchanged { report.unchanged += 1 } else { report.updated += 1 }
                if transition != .unchanged, case .verified(let state, _, _, _) = plan.columns {
                    logger.debug("subscription changed", metadata: [
                        "subscription.id": "\(id)", "transition": "\(transition.rawValue)",
                        "entitlement": "\(state.entitlement(at: configuration.nowMs).rawValue)",
                    ])
                }
            case .conflict(let owner)?:
                if case .failure(let failure) = plan.columns { report.countFailure(failure) }
                logger.warning("receipt belongs to another subscription; nothing granted", metadata: ["subscription.id": "\(id)", "owner": "\(owner)"])
            case .superseded?, .stale?:
                // Apple answered, but the web service replaced the receipt meanwhile, or another
                // writer already recorded newer Apple data: nothing changed.
                report.verified += 1
                report.superseded += 1
            case .missing?, nil:
                report.superseded += 1
            }
        }
    }
}
