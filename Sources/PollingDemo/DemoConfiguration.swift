import AppStoreBackends
import AppStoreSimulator
import StatusPolling

/// The settings of `status-poller demo`.
public struct DemoConfiguration: Sendable {
    public var subscribers: Int
    /// Nights played with faults on; one fault-free night follows for the final check.
    public var nights: Int
    public var seed: UInt64
    /// Per-request probability of an injected fault during the nights.
    public var faultRate: Double
    public var latency: Latency
    public var concurrency: Int
    /// The client's per-request deadline; slow answers are made to exceed it.
    public var requestTimeout: Duration
    /// Whether some answers come only after the request timeout. Off where an outcome must not
    /// depend on the machine's speed: whether a slow answer beats the timeout is a race.
    public var slowAnswers: Bool
    public var retry: RetryPolicy
    /// The simulated app's billing grace period in days (0: none).
    public var gracePeriodDays: Int
    /// A night (1-based) whose every request fails, as in Apple's 2020 outage; nil for none.
    public var outageNight: Int?
    /// The clock of the final night (ms); the first night is `nights` days before it.
    public var finalNightMs: Int64
    /// Which of Apple's APIs the nights ask.
    public var backend: DemoBackend
    /// The Server API's requests per second: the simulator is not Apple, so well above Apple's 50.
    public var serverAPIRate: Int
    /// The nightly selection (worker processes are given its lapsed sweep and use `run`'s defaults
    /// for the rest), and the truth check's idea of which rows a later night selects.
    public var windows = SelectionWindows()
    /// The population's rates, `NAME=VALUE` as `simulate --rate` takes them (e.g.
    /// `resubscribe_outside_app=1`: no purchase after the first uploads a receipt).
    public var rates: [String] = []
    /// App Store Server Notifications on: V1 with verifyReceipt, V2 (and the history catch-up)
    /// with the Server API; every row is then checked against the App Store now.
    public var notifications = false
    /// How deliveries go wrong: a few lost (retried on Apple's schedule), duplicated, delayed.
    public var notificationFaults = NotificationFaults(lost: 0.005, duplicated: 0.02, delayed: 0.01, maxDelayMs: 10 * 60_000)
    /// Nights (1-based, inclusive) from the night before the first through the last of which the
    /// receiver is down: Apple's tries then fail, and the runs catch up from the history.
    public var receiverDownNights: ClosedRange<Int>?
    /// `demo --events`: the outbox delivered after each night to a loopback endpoint that checks
    /// signatures and fails 5 %; down through `eventsDownNight`.
    public var events = false
    public var eventsDownNight: Int?

    public init(
        subscribers: Int = 3000, nights: Int = 45, seed: UInt64 = 42, faultRate: Double = 0.03,
        latency: Latency = .uniform(.milliseconds(1), .milliseconds(4)), concurrency: Int = 32,
        requestTimeout: Duration = .seconds(1), retry: RetryPolicy = RetryPolicy(initialBackoff: .milliseconds(100), maxBackoff: .seconds(1)),
        slowAnswers: Bool = true, gracePeriodDays: Int = 16, outageNight: Int? = nil, finalNightMs: Int64,
        backend: DemoBackend = .verifyReceipt, serverAPIRate: Int = 1000
    ) {
        self.backend = backend
        self.serverAPIRate = serverAPIRate
        self.subscribers = subscribers
        self.nights = nights
        self.seed = seed
        self.faultRate = faultRate
        self.latency = latency
        self.concurrency = concurrency
        self.requestTimeout = requestTimeout
        self.slowAnswers = slowAnswers
        self.retry = retry
        self.gracePeriodDays = gracePeriodDays
        self.outageNight = outageNight
        self.finalNightMs = finalNightMs
    }

    static let dayMs: Int64 = 86_400_000

    /// The clock of night `n` (1-based; night `nights + 1` is the final, fault-free one).
    func clock(night n: Int) -> Int64 { finalNightMs - Int64(nights + 1 - n) * Self.dayMs }
}
