import NIOCore
import NIOSSL
import NIOTLS

/// Completes `handshake` when the TLS handshake is done, or fails it with the reason (an untrusted
/// certificate, a name mismatch, the deadline), so that a connection is handed out only once it
/// can carry a request, and a TLS problem is reported as one rather than as a closed connection.
final class TLSHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let handshake: EventLoopPromise<Void>
    private let deadline: NIODeadline
    private var timer: Scheduled<Void>?

    init(handshake: EventLoopPromise<Void>, deadline: NIODeadline) {
        self.handshake = handshake
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.handshake.fail(HTTPExchangeError.timedOut)
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            timer?.cancel()
            handshake.succeed(())
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        timer?.cancel()
        handshake.fail(HTTPExchangeError.connectFailed("TLS: \(String(describing: error).prefix(200))"))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        handshake.fail(HTTPExchangeError.connectFailed("TLS: the server closed the connection during the handshake"))
        context.fireChannelInactive()
    }
}
