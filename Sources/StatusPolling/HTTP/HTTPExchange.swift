import NIOCore
import NIOHTTP1

/// One request and its answer on a kept-alive HTTP/1.1 connection.
enum HTTPExchange {
    /// What the caller hands to a connection's pipeline: the request, when the whole exchange must
    /// be over, and where the answer goes.
    struct Request: Sendable {
        var head: HTTPRequestHead
        var body: ByteBuffer
        var deadline: NIODeadline
        var promise: EventLoopPromise<HTTPResponse>
    }
}

/// A complete answer: status, headers and the whole body.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: ByteBuffer
    /// The server keeps the connection open for the next request.
    public var keepAlive: Bool
}
