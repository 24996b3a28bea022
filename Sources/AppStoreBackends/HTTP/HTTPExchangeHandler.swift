import NIOCore
import NIOHTTP1
import NIOSSL

/// The end of a connection's pipeline: writes one request (head, body and end in one flush),
/// collects the answer, and completes the request's promise exactly once — with the answer, or
/// with an ``HTTPExchangeError`` when the deadline passes, the body grows over the limit or the
/// connection fails. The deadline covers the whole exchange, so a server that trickles its body
/// cannot hold a request past it.
final class HTTPExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPExchange.Request
    typealias OutboundOut = HTTPClientRequestPart

    private let maxBodyBytes: Int
    private var promise: EventLoopPromise<HTTPResponse>?
    private var head: HTTPResponseHead?
    private var body: ByteBuffer?
    private var deadline: Scheduled<Void>?

    init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise writePromise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        guard promise == nil else {
            // The pool hands a connection to one request at a time; this is a bug, not a state.
            request.promise.fail(HTTPExchangeError.malformedResponse("a second request on a busy connection"))
            writePromise?.fail(ChannelError.inappropriateOperationForState)
            return
        }
        promise = request.promise
        head = nil
        body = nil
        deadline = context.eventLoop.assumeIsolated().scheduleTask(deadline: request.deadline) {
            self.fail(.timedOut, context: context)
        }
        context.write(wrapOutboundOut(.head(request.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(request.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: writePromise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard promise != nil else { return }
        switch unwrapInboundIn(data) {
        case .head(let received):
            head = received
        case .body(var part):
            let size = (body?.readableBytes ?? 0) + part.readableBytes
            guard size <= maxBodyBytes else { return fail(.responseTooLarge(limit: maxBodyBytes), context: context) }
            if body == nil {
                body = part
            } else {
                body!.writeBuffer(&part)
            }
        case .end:
            guard let promise, let head else { return }
            self.promise = nil
            deadline?.cancel()
            deadline = nil
            let answer = HTTPResponse(status: Int(head.status.code), headers: head.headers, body: body ?? ByteBuffer(), keepAlive: head.isKeepAlive)
            body = nil
            promise.succeed(answer)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.connectionClosed(afterResponseStarted: head != nil), context: context)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPParserError {
            fail(.malformedResponse("\(error)"), context: context)
        } else if error is NIOSSLError || error is BoringSSLError {
            // An untrusted certificate, a name mismatch, no common protocol: say so.
            fail(.connectFailed("TLS: \(String(describing: error).prefix(200))"), context: context)
        } else {
            fail(.connectionClosed(afterResponseStarted: head != nil), context: context)
        }
        context.close(promise: nil)
    }

    /// Completes the pending request with `error` and closes the connection, which can no longer
    /// be trusted to be at a message boundary.
    private func fail(_ error: HTTPExchangeError, context: ChannelHandlerContext) {
        guard let promise else { return }
        self.promise = nil
        deadline?.cancel()
        deadline = nil
        body = nil
        promise.fail(error)
        context.close(promise: nil)
    }
}
