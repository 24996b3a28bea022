import Foundation
import Synchronization

/// Counts of answers by outcome (`status_0`, `status_21007`, `fault_http_503`, `outage`, …; the
/// App Store Server API's prefixed `server_api_`).
public struct SimulatorStatistics: Sendable, Equatable {
    /// verifyReceipt requests.
    public var requests = 0
    public var outcomes: [String: Int] = [:]
    /// App Store Server API requests by endpoint (`inApps/v1/subscriptions`, `inApps/v2/history`).
    public var serverAPIRequests: [String: Int] = [:]
    /// verifyReceipt requests that got an injected fault or an outage answer.
    public var faults: Int { outcomes.filter { $0.key.hasPrefix("fault_") || $0.key == "outage" }.values.reduce(0, +) }
    /// App Store Server API requests that got an injected fault or an outage answer.
    public var serverAPIFaults: Int {
        outcomes.filter { $0.key.hasPrefix("server_api_fault_") || $0.key == "server_api_outage" }.values.reduce(0, +)
    }
}
