import Foundation
import Synchronization

/// What the HTTP layer sends back, after `delay`.
public struct SimulatedAnswer: Sendable {
    public enum Reply: Sendable {
        /// HTTP 200 with a JSON body.
        case json(Data)
        case http(Int, body: String, headers: [String: String])
        /// HTTP 200 with an HTML page.
        case html
        /// Close the connection mid-answer.
        case drop
    }

    public var reply: Reply
    public var delay: Duration
    /// What the statistics count it as (`status_0`, `fault_http_503`, `outage`, …).
    public var outcome = ""

    /// The HTTP status it goes back with (a dropped connection promises 200, then breaks off).
    public var httpStatus: Int {
        if case .http(let code, _, _) = reply { return code }
        return 200
    }
}
