/// Why an HTTP exchange produced no answer. Each case says which way the verifyReceipt client
/// classifies it: a timeout, a transport failure, or an answer too large to read.
public enum HTTPExchangeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No complete answer before the exchange's deadline (connection, request and the whole body).
    case timedOut
    /// The connection could not be made (refused, unreachable, DNS, TLS handshake).
    case connectFailed(String)
    /// The server closed the connection or it failed; `afterResponseStarted` when some of an
    /// answer had arrived (a connection that was idle and stale has not).
    case connectionClosed(afterResponseStarted: Bool)
    /// The body went over the configured limit; the connection was closed.
    case responseTooLarge(limit: Int)
    /// The bytes were not HTTP/1.1.
    case malformedResponse(String)

    public var description: String {
        switch self {
        case .timedOut: return "no complete answer before the deadline"
        case .connectFailed(let reason): return "could not connect: \(reason)"
        case .connectionClosed(let started): return started ? "the connection closed in the middle of the answer" : "the connection closed before an answer"
        case .responseTooLarge(let limit): return "the answer is larger than \(limit) bytes"
        case .malformedResponse(let reason): return "the answer is not HTTP/1.1: \(reason)"
        }
    }
}
