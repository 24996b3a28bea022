import EntitlementCore
import Logging

extension SupportDesk {
    /// What became of a row after Apple extended its renewal date.
    public enum ExtensionApplied: Sendable, Equatable {
        /// Apple's signed status was written through the row update plan; `transition` is the
        /// audit row's reason (`extended`, or `unchanged` when the row already had it).
        case written(transition: SubscriptionTransition?, expiresAtMs: Int64?)
        /// The plan did not write it (newer data on the row, another owner…): the next run asks again.
        case notWritten(String)
        /// Apple's status could not be had or trusted: the next run asks again.
        case failed(VerificationFailure)
    }

    /// Asks `source` (the Server API) for `row`'s signed status right after Apple extended it,
    /// and writes the answer through the one apply path (``SubscriptionWriter/apply(_:)``: newer
    /// data wins) with `extended` as its provenance. Apple's unsigned `effectiveDate` is never
    /// written itself.
    public func applyExtension(
        to row: SubscriptionRow, source: any SubscriptionStatusSource, requestIdentifier: String, nowMs: Int64, logger: Logger
    ) async throws -> ExtensionApplied {
        let lookup = try await source.status(of: row, logger: logger)
        let answer: StatusAnswer
        switch lookup.result {
        case .answered(let answered): answer = answered
        case .failed(let failure): return .failed(failure)
        case .credentialsRejected(let abort): throw abort
        }
        switch EntitlementDecision.decide(answer: answer, row: row, bundleID: bundleID, nowMs: nowMs) {
        case .reject(let failure):
            return .failed(failure)
        case .adopt(let state, let latestReceipt, let otherChains, let evidence):
            let update = VerifiedUpdate(
                subscriptionID: row.id, provenance: .extended(requestIdentifier: requestIdentifier), receiptSent: nil, state: state,
                otherChains: otherChains, latestReceipt: latestReceipt, upstreamStatus: answer.upstreamStatus, verifiedAtMs: nowMs, evidence: evidence,
                transactions: answer.transactions)
            let plan = try await store.apply(ResultBatch([.verified(update)]))[0]
            guard case .written? = plan.result else { return .notWritten("\(plan.result.map { "\($0)" } ?? "nothing planned")") }
            return .written(transition: plan.transition, expiresAtMs: state.expiresAt)
        }
    }
}
