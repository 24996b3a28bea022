import Foundation

/// What goes wrong, how often, and how slowly the simulated App Store answers. Every draw comes from
/// the population's seed, the receipt, the simulated clock and the attempt number, so a run replays
/// the same faults whatever the order of its requests.
public struct FaultConfiguration: Sendable, Equatable {
    /// The faults Apple's endpoint has shown in the field.
    public enum Fault: String, CaseIterable, Sendable, Codable {
        /// The connection closes mid-answer.
        case droppedConnection = "dropped_connection"
        /// HTTP 503.
        case serviceUnavailable = "http_503"
        /// HTTP 429 with `Retry-After`.
        case rateLimited = "http_429"
        /// HTTP 200 with an HTML page, as during the 2020-01-24 outage.
        case htmlPage = "html_page"
        /// Status 21005, "try again".
        case receiptServerUnavailable = "status_21005"
        /// Status 21009, "try again later".
        case internalDataAccess = "status_21009"
        /// Status 21100–21199 with the retry flag true (in either spelling).
        case retryableInternalError = "status_211xx_retryable"
        /// Status 21100–21199 with the retry flag false: the poller must not retry.
        case finalInternalError = "status_211xx_final"
        /// An answer slower than the client's timeout.
        case slowAnswer = "slow_answer"
    }

    /// Probability of each fault per verifyReceipt request.
    public var rates: [Fault: Double]
    /// Probability of each fault per App Store Server API request.
    public var serverAPIRates: [ServerAPIFault: Double]
    /// Latency of every answer.
    public var latency: Latency
    /// How long a `slowAnswer` takes; set it above the client's request timeout.
    public var slowAnswerDelay: Duration
    /// `Retry-After` sent with 429, in seconds.
    public var retryAfterSeconds: Int
    /// Windows of simulated time (ms) in which every request fails (503s, then HTML pages).
    public var outages: [ClosedRange<Int64>]

    public init(
        rates: [Fault: Double] = [:], latency: Latency = .none, slowAnswerDelay: Duration = .seconds(3),
        retryAfterSeconds: Int = 1, outages: [ClosedRange<Int64>] = [], serverAPIRates: [ServerAPIFault: Double] = [:]
    ) {
        self.rates = rates
        self.serverAPIRates = serverAPIRates
        self.latency = latency
        self.slowAnswerDelay = slowAnswerDelay
        self.retryAfterSeconds = retryAfterSeconds
        self.outages = outages
    }

    /// No faults and no latency.
    public static let none = FaultConfiguration()

    /// `total` spread over the faults: the retryable ones evenly, the final 211xx at a tenth of
    /// their share (a real store rarely says "do not retry"). `excluding` leaves some kinds out
    /// (a test whose outcome must not depend on timing leaves out slow answers); their Server API
    /// counterparts (slow answer, dropped connection, 429) go too. The Server API gets the same
    /// `total` over its own kinds, its final 5000000 at a tenth of a share as well.
    public static func spread(
        total: Double, latency: Latency = .none, slowAnswerDelay: Duration = .seconds(3), excluding: Set<Fault> = [],
        excludingServerAPI: Set<ServerAPIFault> = []
    ) -> Self {
        let kinds = Fault.allCases.filter { !excluding.contains($0) }
        let weights: [Fault: Double] = Dictionary(uniqueKeysWithValues: kinds.map { ($0, $0 == .finalInternalError ? 0.1 : 1) })
        let sum = weights.values.reduce(0, +)
        let leftOut = excludingServerAPI.union(excluding.compactMap(ServerAPIFault.init(counterpartOf:)))
        let apiKinds = ServerAPIFault.allCases.filter { !leftOut.contains($0) }
        let apiWeights: [ServerAPIFault: Double] = Dictionary(uniqueKeysWithValues: apiKinds.map { ($0, $0 == .internalError ? 0.1 : 1) })
        let apiSum = apiWeights.values.reduce(0, +)
        return FaultConfiguration(
            rates: weights.mapValues { total * $0 / sum }, latency: latency, slowAnswerDelay: slowAnswerDelay,
            serverAPIRates: apiSum > 0 ? apiWeights.mapValues { total * $0 / apiSum } : [:])
    }

    /// The sum of the verifyReceipt per-request fault rates.
    public var totalRate: Double { rates.values.reduce(0, +) }

    func fault(draw: Double) -> Fault? {
        var cumulative = 0.0
        for fault in Fault.allCases {
            cumulative += rates[fault] ?? 0
            if draw < cumulative { return fault }
        }
        return nil
    }
}
