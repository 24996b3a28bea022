/// One try to post a notification, as Get Notification History lists it (`sendAttempts`).
public struct SendAttempt: Sendable, Equatable {
    /// `sendAttemptResult`: the values of Apple's enumeration the simulator produces.
    public enum Result: String, Sendable {
        case success = "SUCCESS"
        case timedOut = "TIMED_OUT"
        case noResponse = "NO_RESPONSE"
        case unsuccessfulHTTPResponseCode = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
    }

    public var atMs: Int64
    public var result: Result

    public init(atMs: Int64, result: Result) {
        self.atMs = atMs
        self.result = result
    }
}
