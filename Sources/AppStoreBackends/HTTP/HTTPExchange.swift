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
