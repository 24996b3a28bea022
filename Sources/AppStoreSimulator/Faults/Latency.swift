import Foundation

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
