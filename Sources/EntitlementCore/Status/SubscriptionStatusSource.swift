import Logging

/// Where a row's subscription status comes from: verifyReceipt today, the App Store Server API
/// next. An implementation asks its backend about one row — its own retries, environment fallback
/// and throttling inside — and answers in the neutral terms ``EntitlementDecision`` reads, so the
/// run, the decision and the store never learn which backend answered beyond ``UpstreamStatus``.
///
/// To add a backend, implement this protocol: map the backend's answer into ``StatusAnswer`` and
/// its failures into ``VerificationFailure`` (transient or not), and report rejected credentials
/// with ``StatusLookup/Result/credentialsRejected(_:)``, which aborts the run.
public protocol SubscriptionStatusSource: Sendable {
    /// Asks about one row (its receipt, its chain, its environment). Throws only
    /// `CancellationError`, when the run is stopping; every other problem is in the result.
    func status(of row: SubscriptionRow, logger: Logger) async throws -> StatusLookup
}
