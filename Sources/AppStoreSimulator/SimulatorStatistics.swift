import Foundation
import Synchronization

/// Counts of answers by outcome (`status_0`, `status_21007`, `fault_http_503`, `outage`, …).
public struct SimulatorStatistics: Sendable, Equatable {
    public var requests = 0
    public var outcomes: [String: Int] = [:]
    /// Requests that got an injected fault or an outage answer.
    public var faults: Int { outcomes.filter { $0.key.hasPrefix("fault_") || $0.key == "outage" }.values.reduce(0, +) }
}
