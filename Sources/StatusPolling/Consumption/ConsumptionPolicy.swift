/// What the team answers Apple's consumption requests with, and how the sender paces itself:
/// from the config file (`consumption_*`, docs/CONSUMPTION.md).
public struct ConsumptionPolicy: Sendable, Equatable {
    /// `sampleContentProvided`: the product offers a free trial or an introductory offer, or a
    /// preview of what it gives, before the purchase (`consumption_sample_content_provided`).
    public var sampleContentProvided: Bool
    /// The refund-preference rules, first match wins (`consumption_refund_rules`); none: no preference.
    public var rules: [RefundPreferenceRule]
    /// How long a claimed request is the claimer's before another sender may take it (a sender
    /// killed mid-send leaves it claimed this long).
    public var claimLease: Duration
    /// The first retry's wait after a 5xx, a 429 without `Retry-After` or a failed connection; doubled per attempt.
    public var firstRetry: Duration
    /// The longest wait between retries.
    public var maximumRetry: Duration
    /// How often a request whose customer the web service has not yet written about is looked at
    /// again, until the deadline (`consumption_consent_recheck_seconds`).
    public var consentRecheck: Duration

    public init(
        sampleContentProvided: Bool = false, rules: [RefundPreferenceRule] = [], claimLease: Duration = .seconds(120),
        firstRetry: Duration = .seconds(30), maximumRetry: Duration = .seconds(1800), consentRecheck: Duration = .seconds(300)
    ) {
        self.sampleContentProvided = sampleContentProvided
        self.rules = rules
        self.claimLease = claimLease
        self.firstRetry = firstRetry
        self.maximumRetry = maximumRetry
        self.consentRecheck = consentRecheck
    }

    /// The answer to `request`; nil without the customer's consent (nothing may be sent).
    public func answer(_ request: ConsumptionRequestRecord) -> ConsumptionInformation? {
        guard request.customerConsented == true else { return nil }
        return ConsumptionInformation(
            customerConsented: true, deliveryStatus: request.deliveryStatus, sampleContentProvided: sampleContentProvided,
            refundPreference: rules.first { $0.matches(request) }?.prefer)
    }

    /// The wait before attempt `attempts + 1` after a failure that may pass: Apple's `Retry-After`
    /// when it gave one, else the doubling backoff.
    public func retryDelay(afterAttempts attempts: Int, retryAfter: Duration?) -> Duration {
        if let retryAfter { return max(retryAfter, .milliseconds(1)) }
        var delay = firstRetry
        for _ in 1..<max(attempts, 1) where delay < maximumRetry { delay = delay * 2 }
        return min(delay, maximumRetry)
    }
}
