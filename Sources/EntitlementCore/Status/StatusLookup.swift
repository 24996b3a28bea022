/// What a ``SubscriptionStatusSource`` found out about one row, with what it cost.
public struct StatusLookup: Sendable {
    public enum Result: Sendable {
        /// The backend answered with the row's subscriptions, to decide on.
        /// Boxed: an answer is large, and a lookup is held in the async frames of every request
        /// in flight (2 KB of each at c = 256 inline, heaptrack).
        indirect case answered(StatusAnswer)
        /// No usable answer; the row keeps its entitlement.
        case failed(VerificationFailure)
        /// The backend refused the poller's credentials (verifyReceipt's 21004, a 401 for a bad
        /// key): every further request would fail the same way, so the run stops at once.
        case credentialsRejected(RunAbort)
    }

    /// Requests and retries spent on one row, and any deprecation notice the backend sent.
    public struct Stats: Sendable, Equatable {
        public var requests = 0
        public var retries = 0
        /// Answers that asked to slow down: HTTP 429, a 5xx, or a status the backend says to retry.
        public var throttled = 0
        /// The backend's notice that it is being retired, when it sent one.
        public var deprecation: DeprecationNotice?
        public init() {}
    }

    public var result: Result
    public var stats: Stats

    public init(result: Result, stats: Stats) {
        self.result = result
        self.stats = stats
    }
}
