import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A small HTTP/1.1 client for one job: many short POSTs to one or two endpoints over kept-alive
/// connections, each exchange bounded by one deadline.
///
/// Built on SwiftNIO rather than AsyncHTTPClient after profiling: AsyncHTTPClient's pool manager,
/// request state machines, timers and separate flushes of head and body cost more CPU per receipt
/// than the rest of the poller (docs/PERFORMANCE.md). Here a request is one write and one flush on
/// a connection the caller holds alone, and the answer completes one promise. The pool keeps up to
/// `maxIdleConnectionsPerEndpoint` idle connections, so a run with concurrency C reuses C of them.
/// Behind an egress proxy (``Configuration/proxy``) a new connection is a `CONNECT` tunnel
/// (`KeepAliveHTTPClient+Proxy.swift`); once it is up, it carries requests as a direct one does.
public final class KeepAliveHTTPClient: Sendable {
    public struct Configuration: Sendable {
        /// Limit for setting up a connection (TCP and TLS), within the exchange's own deadline.
        public var connectTimeout: Duration
        /// Idle connections kept per endpoint; more are closed when they come back.
        public var maxIdleConnectionsPerEndpoint: Int
        /// Largest body read; a larger answer fails and its connection is closed.
        public var maxResponseBytes: Int
        /// TLS for https endpoints: the system's trust roots and full verification by default.
        public var tls: TLSConfiguration
        /// The egress proxy, if any (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, read by the executable):
        /// connections then go through a `CONNECT` tunnel, TLS still with the real host.
        public var proxy: ProxyConfiguration?

        public init(
            connectTimeout: Duration = .seconds(3), maxIdleConnectionsPerEndpoint: Int = 64, maxResponseBytes: Int = 8 << 20,
            tls: TLSConfiguration = .makeClientConfiguration(), proxy: ProxyConfiguration? = nil
        ) {
            self.connectTimeout = connectTimeout
            self.maxIdleConnectionsPerEndpoint = maxIdleConnectionsPerEndpoint
            self.maxResponseBytes = maxResponseBytes
            self.tls = tls
            self.proxy = proxy
        }
    }

    public let configuration: Configuration
    let group: any EventLoopGroup
    /// Idle connections by origin (scheme, host, port): requests to many paths share them.
    private let idle = Mutex<[HTTPEndpoint: [any Channel]]>([:])
    private let tls = Mutex<NIOSSLContext?>(nil)

    public init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = group
    }

    /// POSTs `body` to `endpoint` and returns the whole answer, or throws an ``HTTPExchangeError``
    /// (or `CancellationError` when the calling task is cancelled). `timeout` bounds everything:
    /// connecting, writing, and reading the last byte of the body.
    ///
    /// A kept-alive connection the server closed while it sat idle fails before any answer; the
    /// request is then sent once more on a new connection. verifyReceipt only reads, so this is safe.
    public func post(_ endpoint: HTTPEndpoint, headers: HTTPHeaders, body: ByteBuffer, timeout: Duration) async throws -> HTTPResponse {
        try await send(.POST, endpoint, headers: headers, body: body, timeout: timeout)
    }

    /// GETs `endpoint` (the App Store Server API's reads), with the same deadline and stale
    /// connection handling as ``post(_:headers:body:timeout:)``.
    public func get(_ endpoint: HTTPEndpoint, headers: HTTPHeaders, timeout: Duration) async throws -> HTTPResponse {
        try await send(.GET, endpoint, headers: headers, body: ByteBuffer(), timeout: timeout)
    }

    /// PUTs `body` (Extend a Subscription Renewal Date), as ``post(_:headers:body:timeout:)``: a
    /// request sent again on a new connection is safe, because Apple takes a request identifier once.
    public func put(_ endpoint: HTTPEndpoint, headers: HTTPHeaders, body: ByteBuffer, timeout: Duration) async throws -> HTTPResponse {
        try await send(.PUT, endpoint, headers: headers, body: body, timeout: timeout)
    }

    private func send(_ method: HTTPMethod, _ endpoint: HTTPEndpoint, headers: HTTPHeaders, body: ByteBuffer, timeout: Duration) async throws -> HTTPResponse {
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: endpoint.target, headers: headers)
        head.headers.replaceOrAdd(name: "Host", value: endpoint.hostHeader)
        head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        var retriedStale = false
        while true {
            try Task.checkCancellation()
            let (channel, reused) = try await connection(to: endpoint, deadline: deadline)
            do {
                let answer = try await exchange(on: channel, head: head, body: body, deadline: deadline)
                if answer.keepAlive { release(channel, to: endpoint) } else { channel.close(promise: nil) }
                return answer
            } catch HTTPExchangeError.connectionClosed(afterResponseStarted: false) where reused && !retriedStale {
                retriedStale = true
            }
        }
    }

    /// Runs `body` with a new client and shuts it down afterwards, whether `body` returns or throws.
    public static func withClient<Result: Sendable>(
        _ configuration: Configuration, _ body: (KeepAliveHTTPClient) async throws -> Result
    ) async throws -> Result {
        let client = KeepAliveHTTPClient(configuration: configuration)
        let result: Result
        do {
            result = try await body(client)
        } catch {
            await client.shutdown()
            throw error
        }
        await client.shutdown()
        return result
    }

    /// Closes every idle connection. Requests still running keep theirs until they finish.
    public func shutdown() async {
        let channels = idle.withLock { pools in
            defer { pools.removeAll() }
            return pools.values.flatMap { $0 }
        }
        for channel in channels { try? await channel.close() }
    }

    private func exchange(on channel: any Channel, head: HTTPRequestHead, body: ByteBuffer, deadline: NIODeadline) async throws -> HTTPResponse {
        let promise = channel.eventLoop.makePromise(of: HTTPResponse.self)
        let request = HTTPExchange.Request(head: head, body: body, deadline: deadline, promise: promise)
        // A write that never reaches the handler (the connection closed under us) must still
        // complete the answer's promise; a second completion is ignored by NIO.
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { _ in promise.fail(HTTPExchangeError.connectionClosed(afterResponseStarted: false)) }
        return try await withTaskCancellationHandler {
            channel.writeAndFlush(request, promise: written)
            do {
                return try await promise.futureResult.get()
            } catch {
                try Task.checkCancellation()
                throw error
            }
        } onCancel: {
            // Closing fails the pending promise; the task then sees its cancellation.
            channel.close(promise: nil)
        }
    }

    /// An idle connection to `endpoint` (the most recently used one), or a new one.
    private func connection(to endpoint: HTTPEndpoint, deadline: NIODeadline) async throws -> (any Channel, reused: Bool) {
        while let channel = idle.withLock({ $0[endpoint.origin]?.popLast() }) {
            if channel.isActive { return (channel, true) }
        }
        return (try await connect(to: endpoint, deadline: deadline), false)
    }

    private func release(_ channel: any Channel, to endpoint: HTTPEndpoint) {
        let kept = idle.withLock { pools -> Bool in
            guard channel.isActive, pools[endpoint.origin, default: []].count < configuration.maxIdleConnectionsPerEndpoint else { return false }
            pools[endpoint.origin, default: []].append(channel)
            return true
        }
        if !kept { channel.close(promise: nil) }
    }

    private func connect(to endpoint: HTTPEndpoint, deadline: NIODeadline) async throws -> any Channel {
        let remaining = deadline - .now()
        guard remaining > .zero else { throw HTTPExchangeError.timedOut }
        let tls = endpoint.useTLS ? try tlsContext() : nil
        if let proxy = configuration.proxy?.proxy(for: endpoint) {
            return try await tunnel(through: proxy, to: endpoint, tls: tls, deadline: deadline)
        }
        let maxBodyBytes = configuration.maxResponseBytes
        // The connection's loop is picked first, so the TLS handshake's promise can be made here.
        let loop = group.next()
        let handshake = tls == nil ? nil : loop.makePromise(of: Void.self)
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(min(TimeAmount(configuration.connectTimeout), remaining))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.addExchangeHandlers(
                        channel.pipeline.syncOperations, endpoint: endpoint, tls: tls, handshake: handshake, deadline: deadline, maxBodyBytes: maxBodyBytes)
                }
            }
        do {
            let channel: any Channel
            do {
                channel = try await bootstrap.connect(host: endpoint.host, port: endpoint.port).get()
            } catch {
                handshake?.fail(error)
                throw error
            }
            try await Self.awaitHandshake(handshake, on: channel)
            return channel
        } catch {
            throw Self.connectFailure(error, to: endpoint.hostHeader, deadline: deadline)
        }
    }

    /// What a connection carries once it reaches the origin (directly or through a tunnel): TLS
    /// with the endpoint's name for SNI and verification (none for an IP literal), then HTTP/1.1
    /// and the exchange handler.
    static func addExchangeHandlers(
        _ pipeline: ChannelPipeline.SynchronousOperations, endpoint: HTTPEndpoint, tls: NIOSSLContext?, handshake: EventLoopPromise<Void>?,
        deadline: NIODeadline, maxBodyBytes: Int
    ) throws {
        if let tls, let handshake {
            let serverHostname = endpoint.host.contains(":") || endpoint.host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : endpoint.host
            try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
            try pipeline.addHandler(TLSHandshakeHandler(handshake: handshake, deadline: deadline))
        }
        try pipeline.addHTTPClientHandlers()
        try pipeline.addHandler(HTTPExchangeHandler(maxBodyBytes: maxBodyBytes))
    }

    /// Hands the connection out only once TLS is up; a failed handshake closes it and says why.
    static func awaitHandshake(_ handshake: EventLoopPromise<Void>?, on channel: any Channel) async throws {
        guard let handshake else { return }
        do { try await handshake.futureResult.get() } catch {
            channel.close(promise: nil)
            throw error
        }
    }

    /// A connection that could not be set up, as an ``HTTPExchangeError`` naming `target`.
    static func connectFailure(_ error: any Error, to target: String, deadline: NIODeadline) -> HTTPExchangeError {
        if let error = error as? HTTPExchangeError { return error }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return NIODeadline.now() >= deadline ? .timedOut : .connectFailed("connection to \(target) timed out")
        }
        return .connectFailed("\(target): \(String(describing: error).prefix(200))")
    }

    /// One TLS context for every https connection, made on first use.
    private func tlsContext() throws -> NIOSSLContext {
        try tls.withLock { context in
            if let context { return context }
            let made = try NIOSSLContext(configuration: configuration.tls)
            context = made
            return made
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
