import Foundation

/// Durations as an operator writes them: `90s`, `45m`, `2h`, or plain seconds (`5400`).
extension Duration {
    init?(text: String) {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        var number = Substring(text.trimmingCharacters(in: .whitespaces))
        var scale = 1.0
        if let last = number.last, let unit = units[last] {
            scale = unit
            number = number.dropLast()
        }
        guard let value = Double(number), value.isFinite, value > 0, value * scale <= 7 * 86_400 else { return nil }
        self = .milliseconds(Int64((value * scale * 1000).rounded()))
    }
}
