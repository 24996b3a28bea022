/// A failed verification, ready to be recorded.
public struct FailedVerification: Sendable, Equatable {
    public var subscriptionID: Int64
    public var runID: Int64?
    public var failure: VerificationFailure
    public var attemptedAtMs: Int64

    public init(subscriptionID: Int64, runID: Int64? = nil, failure: VerificationFailure, attemptedAtMs: Int64) {
        self.subscriptionID = subscriptionID
        self.runID = runID
        self.failure = failure
        self.attemptedAtMs = attemptedAtMs
    }
}
