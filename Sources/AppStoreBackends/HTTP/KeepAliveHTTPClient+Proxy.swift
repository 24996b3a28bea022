import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import NIOSSL

extension KeepAliveHTTPClient {
    private static let proxyEncoder = "proxy-request-encoder"
    private static let proxyDecoder = "proxy-response-decoder"

    /// A connection to `endpoint` through `proxy`: TCP to the proxy, `CONNECT host:port` (with
    /// `Proxy-Authorization` when the proxy URL has a user) by swift-nio-extras'
    /// `NIOHTTP1ProxyConnectHandler`, then the proxy's HTTP handlers come out and the connection
    /// is set up as a direct one would be: TLS with the real host (SNI, certificate checked against
    /// its name), HTTP/1.1. Failures name the proxy by `host:port` only, never its credentials.
    func tunnel(through proxy: ProxyConfiguration.Proxy, to endpoint: HTTPEndpoint, tls: NIOSSLContext?, deadline: NIODeadline) async throws -> any Channel {
        let loop = group.next()
        let tunnel = loop.makePromise(of: Void.self)
        var headers = HTTPHeaders()
        if let authorization = proxy.authorization { headers.add(name: "Proxy-Authorization", value: authorization) }
        let target = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(min(TimeAmount(configuration.connectTimeout), deadline - .now()))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { [headers] channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(HTTPRequestEncoder(), name: Self.proxyEncoder)
                    try pipeline.addHandler(ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)), name: Self.proxyDecoder)
                    try pipeline.addHandler(
                        NIOHTTP1ProxyConnectHandler(targetHost: target, targetPort: endpoint.port, headers: headers, deadline: deadline, promise: tunnel))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: proxy.host, port: proxy.port).get()
        } catch {
            tunnel.fail(error)
            throw Self.connectFailure(error, to: "the proxy \(proxy)", deadline: deadline)
        }
        do {
            try await tunnel.futureResult.get()
            try await channel.pipeline.removeHandler(name: Self.proxyEncoder).get()
            try await channel.pipeline.removeHandler(name: Self.proxyDecoder).get()
        } catch {
            channel.close(promise: nil)
            throw Self.tunnelFailure(error, proxy: proxy, target: "\(target):\(endpoint.port)", deadline: deadline)
        }
        let handshake = tls == nil ? nil : channel.eventLoop.makePromise(of: Void.self)
        let maxBodyBytes = configuration.maxResponseBytes
        do {
            try await channel.eventLoop.submit {
                try Self.addExchangeHandlers(
                    channel.pipeline.syncOperations, endpoint: endpoint, tls: tls, handshake: handshake, deadline: deadline, maxBodyBytes: maxBodyBytes)
            }.get()
            try await Self.awaitHandshake(handshake, on: channel)
        } catch {
            handshake?.fail(error)
            channel.close(promise: nil)
            throw Self.connectFailure(error, to: "\(endpoint.hostHeader) through the proxy \(proxy)", deadline: deadline)
        }
        return channel
    }

    /// Why the proxy did not open the tunnel, in words an operator can act on.
    static func tunnelFailure(_ error: any Error, proxy: ProxyConfiguration.Proxy, target: String, deadline: NIODeadline) -> HTTPExchangeError {
        guard let refused = error as? NIOHTTP1ProxyConnectHandler.Error else {
            return connectFailure(error, to: "the proxy \(proxy)", deadline: deadline)
        }
        if refused == .proxyAuthenticationRequired() {
            return .connectFailed(proxy.credentialsRefused(status: "407 Proxy Authentication Required"))
        }
        if refused == .httpProxyHandshakeTimeout() {
            return NIODeadline.now() >= deadline ? .timedOut : .connectFailed("the proxy \(proxy) did not answer CONNECT \(target) in time")
        }
        let text = String(describing: refused)
        if let found = text.range(of: "status: ") {
            let status = text[found.upperBound...].prefix { character in character != "," && character != ")" && character != "}" }
            // tinyproxy answers a CONNECT with wrong credentials 401, not 407.
            if status.hasPrefix("401") { return .connectFailed(proxy.credentialsRefused(status: String(status))) }
            return .connectFailed("the proxy \(proxy) refused CONNECT \(target): \(status); is the host allowed through it (or should NO_PROXY list it)?")
        }
        return .connectFailed("the proxy \(proxy) did not open a tunnel to \(target): \(text.prefix { $0 != "(" })")
    }
}
