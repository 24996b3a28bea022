/// SplitMix64: small, fast, and the same sequence on every platform for a given seed, so a
/// simulated population and its faults replay exactly.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A generator for one purpose (a subscriber, a request) derived from the run's seed, so draws
    /// do not depend on the order in which subscribers or requests are handled.
    public init(seed: UInt64, _ parts: UInt64...) {
        var mixed = seed ^ 0x9E37_79B9_7F4A_7C15
        for part in parts { mixed = Self.mix(mixed ^ Self.mix(part &+ 0x632B_E59B_D9B4_E019)) }
        state = mixed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { p > 0 && Double.random(in: 0..<1, using: &self) < p }

    /// A time uniformly in `range` (ms).
    public mutating func time(in range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound >= range.upperBound ? range.lowerBound : Int64.random(in: range, using: &self)
    }
}

/// A stable 64-bit hash of a string (FNV-1a), for deriving generators from identifiers.
func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
    return hash
}
