import EntitlementCore

/// What one answer from the App Store says about the store itself, for the run's concurrency and
/// its circuit breaker.
///
/// Only an explicit request to slow down is an overload on its own; a failure that may pass (a
/// 5xx, a timeout, a retryable status) is noise unless many recent answers are such failures.
public enum AnswerSignal: Sendable, Equatable {
    /// The store answered: a success, or a failure of the row itself (21003, a bundle mismatch).
    case calm
    /// A failure that may pass: a 5xx, a timeout, a dropped connection, an outage page, a status
    /// Apple says to retry. The reason names it in the breaker's message.
    case transient(VerificationFailure.Reason)
    /// The store asked to slow down: HTTP 429, or any answer with `Retry-After`.
    case overload
}
