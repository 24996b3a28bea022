/// The order id on the receipt Apple e-mails for each purchase and renewal (`MK5TTTVWJH`): ten
/// capitals and digits, which Look Up Order ID answers for. Apple's are opaque; the simulator's
/// encode the transaction's place (subscriber, chain, transaction), scrambled with the seed so
/// that an order id of another population (another app) is unknown here.
enum OrderID {
    /// Places up to 2^40: 2^29 subscribers, two chains, 1,024 transactions a chain.
    private static let bits: UInt64 = 40
    private static let mask: UInt64 = (1 << bits) - 1
    private static let multiplier: UInt64 = 0x5DEE_CE66D  // odd: invertible modulo 2^40
    private static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")

    /// The order id of transaction `transaction` of chain `chain` of subscriber `subscriber`.
    static func make(subscriber: Int, chain: Int, transaction: Int, seed: UInt64) -> String? {
        guard subscriber >= 0, subscriber < 1 << 29, (0..<2).contains(chain), (0..<1024).contains(transaction) else { return nil }
        let place = (UInt64(subscriber) << 11) | (UInt64(chain) << 10) | UInt64(transaction)
        var value = ((place &* multiplier) & mask) ^ key(seed)
        var text: [Character] = []
        for _ in 0..<9 {
            text.append(digits[Int(value % 36)])
            value /= 36
        }
        return "M" + String(text.reversed())
    }

    /// The place an order id of this seed names; nil for any other text.
    static func place(_ orderID: String, seed: UInt64) -> (subscriber: Int, chain: Int, transaction: Int)? {
        guard orderID.count == 10, orderID.first == "M" else { return nil }
        var value: UInt64 = 0
        for character in orderID.dropFirst() {
            guard let digit = digits.firstIndex(of: character) else { return nil }
            value = value * 36 + UInt64(digit)
        }
        guard value <= mask else { return nil }
        let place = (((value ^ key(seed)) & mask) &* inverse) & mask
        return (Int(place >> 11), Int((place >> 10) & 1), Int(place & 1023))
    }

    private static func key(_ seed: UInt64) -> UInt64 { SeededRandom.mix(seed ^ 0x0DE7_1D00) & mask }

    /// The multiplier's inverse modulo 2^40 (Newton's iteration doubles the correct bits each step).
    private static let inverse: UInt64 = {
        var x = multiplier
        for _ in 0..<6 { x = x &* (2 &- multiplier &* x) }
        return x & mask
    }()
}
