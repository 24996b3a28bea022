import EntitlementCore

/// The result of replaying one receipt, in verifyReceipt's own terms, with what it cost.
/// ``VerifyReceiptClient/status(of:logger:)`` maps it into a neutral ``StatusLookup``.
public struct Verification: Sendable {
    public enum Result: Sendable {
        /// Apple answered with a receipt to decide on (status 0 or 21006).
        /// Boxed: the response is large, and the result is held in the async frames of every
        /// request in flight.
        indirect case answered(VerifyReceiptResponse)
        /// No usable answer; the row keeps its entitlement.
        case failed(VerificationFailure)
    }

    public var result: Result
    public var stats: StatusLookup.Stats
}
