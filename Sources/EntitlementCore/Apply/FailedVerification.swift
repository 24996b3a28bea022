/// A failed verification, ready to be recorded.
public struct FailedVerification: Sendable, Equatable {
    public var subscriptionID: Int64
    /// Who asked, for the bookkeeping.
    public var provenance: Provenance
    public var runID: Int64? { provenance.runID }
    public var failure: VerificationFailure
    public var attemptedAtMs: Int64

    /// `provenance` defaults to a poll by `runID`.
    public init(subscriptionID: Int64, runID: Int64? = nil, provenance: Provenance? = nil, failure: VerificationFailure, attemptedAtMs: Int64) {
        self.subscriptionID = subscriptionID
        self.provenance = provenance ?? .poll(runID: runID)
        self.failure = failure
        self.attemptedAtMs = attemptedAtMs
    }
}
