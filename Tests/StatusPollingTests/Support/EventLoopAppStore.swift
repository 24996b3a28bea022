import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A verifyReceipt stand-in on 127.0.0.1 that answers on SwiftNIO's event loops, never on Swift's
/// cooperative threads, for a test that times an exchange which must succeed.
///
/// `ScriptedAppStore` answers in Hummingbird handlers, which run on the cooperative threads; with
/// the whole suite running, hundreds of tests share those two threads and an exchange can wait
/// minutes for them. Here the request is read and answered by channel handlers, so an exchange on
/// a connection already open never waits for them: the client writes, both event loops do the rest.
/// Replies are scripted per receipt like `ScriptedAppStore`'s (in order, the last one repeats).
final class EventLoopAppStore: Sendable {
    enum Reply: Sendable {
        /// HTTP 200 with this JSON body.
        case json(String)
        /// No answer until the connection closes.
        case never
        /// Waits until the server has received this many requests in all, then answers this JSON:
        /// requests all in flight at once, on connections of their own, whatever the machine's speed.
        case afterRequests(Int, String)
    }

    private struct State {
        var scripts: [String: [Reply]] = [:]
        var received: [String] = []
        var waiting: [(count: Int, answer: @Sendable () -> Void)] = []
        var connections: [any Channel] = []
    }

    private let state = Mutex(State())

    func script(_ receipt: String, _ replies: [Reply]) { state.withLock { $0.scripts[receipt] = replies } }

    /// How many requests for `receipt` arrived.
    func requests(for receipt: String) -> Int { state.withLock { $0.received.filter { $0 == receipt }.count } }

    /// Records a request and returns the answers now due: its own, and those of requests that were
    /// waiting for it. `answer` writes one JSON body on the request's connection.
    fileprivate func arrived(_ receipt: String, answer: @escaping @Sendable (String) -> Void) -> [@Sendable () -> Void] {
        state.withLock { state in
            state.received.append(receipt)
            var due: [@Sendable () -> Void] = []
            if var replies = state.scripts[receipt], !replies.isEmpty {
                let reply = replies.count > 1 ? replies.removeFirst() : replies[0]
                state.scripts[receipt] = replies
                switch reply {
                case .json(let body): due.append { answer(body) }
                case .never: break
                case .afterRequests(let count, let body): state.waiting.append((count, { answer(body) }))
                }
            } else {
                due.append { answer(#"{"status": 21003}"#) }
            }
            let count = state.received.count
            due += state.waiting.filter { $0.count <= count }.map(\.answer)
            state.waiting.removeAll { $0.count <= count }
            return due
        }
    }

    fileprivate func opened(_ channel: any Channel) { state.withLock { $0.connections.append(channel) } }

    /// Starts a server, runs `body` with it and its URL, and closes the server and every connection
    /// it accepted on every path.
    static func withServer<T: Sendable>(_ body: (EventLoopAppStore, _ url: String) async throws -> T) async throws -> T {
        let store = EventLoopAppStore()
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    store.opened(channel)
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(Handler(store: store))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let url = "http://127.0.0.1:\(server.localAddress?.port ?? 0)/verifyReceipt"
        func stop() async {
            try? await server.close()
            for connection in store.state.withLock({ $0.connections }) { try? await connection.close() }
        }
        do {
            let result = try await body(store, url)
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }

    /// Reads one request at a time (the pipeline holds the next until this one is answered) and
    /// answers it as scripted, on the event loop.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let store: EventLoopAppStore
        var body = ByteBuffer()

        init(store: EventLoopAppStore) { self.store = store }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head:
                body.clear()
            case .body(var part):
                body.writeBuffer(&part)
            case .end:
                let object = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any]
                let channel = context.channel
                let answers = store.arrived(object?["receipt-data"] as? String ?? "") { text in
                    let headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", String(text.utf8.count))])
                    channel.write(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)), promise: nil)
                    channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: text))), promise: nil)
                    channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
                }
                for answer in answers { answer() }
            }
        }
    }
}
