import NIOCore
import NIOHTTP1

/// A complete answer: status, headers and the whole body.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: ByteBuffer
    /// The server keeps the connection open for the next request.
    public var keepAlive: Bool
}
