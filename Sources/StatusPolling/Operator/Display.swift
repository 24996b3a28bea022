import Foundation

/// Small formatting helpers for the operator commands.
package enum Display {
    package static func time(_ ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon).dateTimeSeparator(.space))
    }
    package static func optionalTime(_ ms: Int64?) -> String { ms.map(time) ?? "NULL" }
    package static func seconds(_ s: Double) -> String { s < 60 ? String(format: "%.1fs", s) : String(format: "%.1fm", s / 60) }
    package static func count(_ n: Int?) -> String { n.map(String.init) ?? "-" }
}
