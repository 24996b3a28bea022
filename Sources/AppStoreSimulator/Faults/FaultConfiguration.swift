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

    /// Probability of each fault per request.
    public var rates: [Fault: Double]
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
        retryAfterSeconds: Int = 1, outages: [ClosedRange<Int64>] = []
    ) {
        self.rates = rates
        self.latency = latency
        self.slowAnswerDelay = slowAnswerDelay
        self.retryAfterSeconds = retryAfterSeconds
        self.outages = outages
    }

    /// No faults and no latency.
    public static let none = FaultConfiguration()

    /// `total` spread over the faults: the retryable ones evenly, the final 211xx at a tenth of
    /// their share (a real store rarely says "do not retry").
    public static func spread(total: Double, latency: Latency = .none, slowAnswerDelay: Duration = .seconds(3)) -> Self {
        let weights: [Fault: Double] = Dictionary(uniqueKeysWithValues: Fault.allCases.map { ($0, $0 == .finalInternalError ? 0.1 : 1) })
        let sum = weights.values.reduce(0, +)
        return FaultConfiguration(rates: weights.mapValues { total * $0 / sum }, latency: latency, slowAnswerDelay: slowAnswerDelay)
    }

    /// The sum of the per-request fault rates.
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

/// How long the simulated App Store takes to answer.
public enum Latency: Sendable, Equatable, CustomStringConvertible {
    case none
    case fixed(Duration)
    case uniform(Duration, Duration)
    /// Log-normal around `median`, with `sigma` the standard deviation of its logarithm: a long
    /// tail, as measured latencies have.
    case logNormal(median: Duration, sigma: Double)

    func sample(_ random: inout SeededRandom) -> Duration {
        switch self {
        case .none: return .zero
        case .fixed(let d): return d
        case .uniform(let low, let high):
            let (lo, hi) = (Self.ms(low), Self.ms(high))
            return .microseconds(Int64((lo + (hi - lo) * Double.random(in: 0..<1, using: &random)) * 1000))
        case .logNormal(let median, let sigma):
            // Box–Muller for one standard normal draw.
            let u1 = max(Double.random(in: 0..<1, using: &random), 1e-12)
            let u2 = Double.random(in: 0..<1, using: &random)
            let z = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
            return .microseconds(Int64(Self.ms(median) * exp(sigma * z) * 1000))
        }
    }

    static func ms(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    /// Parses `none`, `fixed:5ms`, `uniform:1ms-20ms`, `lognormal:10ms,0.6` (units ms or s).
    public init?(parsing text: String) {
        func duration(_ s: Substring) -> Duration? {
            if s.hasSuffix("ms"), let v = Double(s.dropLast(2)) { return .microseconds(Int64(v * 1000)) }
            if s.hasSuffix("s"), let v = Double(s.dropLast()) { return .microseconds(Int64(v * 1_000_000)) }
            return nil
        }
        let parts = text.split(separator: ":", maxSplits: 1)
        switch (parts.first, parts.count == 2 ? parts[1] : nil) {
        case ("none", nil): self = .none
        case ("fixed", let v?): guard let d = duration(v) else { return nil }; self = .fixed(d)
        case ("uniform", let v?):
            let bounds = v.split(separator: "-")
            guard bounds.count == 2, let lo = duration(bounds[0]), let hi = duration(bounds[1]), lo <= hi else { return nil }
            self = .uniform(lo, hi)
        case ("lognormal", let v?):
            let pieces = v.split(separator: ",")
            guard pieces.count == 2, let median = duration(pieces[0]), let sigma = Double(pieces[1]), sigma >= 0 else { return nil }
            self = .logNormal(median: median, sigma: sigma)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .none: return "none"
        case .fixed(let d): return "fixed:\(Self.ms(d))ms"
        case .uniform(let a, let b): return "uniform:\(Self.ms(a))ms-\(Self.ms(b))ms"
        case .logNormal(let m, let s): return "lognormal:\(Self.ms(m))ms,\(s)"
        }
    }
}
