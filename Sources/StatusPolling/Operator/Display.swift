import Foundation

/// Small formatting helpers for the operator commands.
package enum Display {
    package static func time(_ ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon).dateTimeSeparator(.space))
    }
    package static func optionalTime(_ ms: Int64?) -> String { ms.map(time) ?? "NULL" }
    package static func seconds(_ s: Double) -> String { s < 60 ? String(format: "%.1fs", s) : String(format: "%.1fm", s / 60) }
    package static func count(_ n: Int?) -> String { n.map(String.init) ?? "-" }
    /// Apple's milliunits as a decimal amount, exactly: 10990 is "10.99", 1200000 "1200".
    package static func milliunits(_ m: Int64) -> String {
        let fraction = String(String(m.magnitude % 1000 + 1000).dropFirst()).replacing(/0+$/, with: "")
        return (m < 0 ? "-" : "") + String(m.magnitude / 1000) + (fraction.isEmpty ? "" : "." + fraction)
    }
}
