import AppStoreBackends
import AsyncHTTPClient

/// The deliverer's HTTP (AsyncHTTPClient): no redirect followed (a 3xx is a failure), no cookies,
/// as many connections to an endpoint as deliveries in flight (AsyncHTTPClient's default is 8) —
/// and the egress proxy the App Store clients use (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`): an
/// endpoint the rules send through it goes through a second client that tunnels there (`CONNECT`,
/// TLS end to end); a loopback endpoint never does. The caller shuts it down.
public final class WebhookClient: Sendable {
    private let direct: HTTPClient
    private let proxied: HTTPClient?
    /// The proxy of each endpoint, by name, that goes through one.
    private let proxies: [String: ProxyConfiguration.Proxy]

    public init(connectionsPerEndpoint: Int = DeliveryPolicy().concurrency, endpoints: [WebhookEndpoint] = [], proxy: ProxyConfiguration? = nil) {
        let routes = endpoints.compactMap { endpoint in Self.proxy(for: endpoint, in: proxy).map { (endpoint.name, $0) } }
        direct = Self.client(connectionsPerEndpoint: connectionsPerEndpoint, proxy: nil)
        // Endpoints are HTTPS unless on loopback, so every proxied one goes through HTTPS_PROXY.
        proxied = routes.first.map { Self.client(connectionsPerEndpoint: connectionsPerEndpoint, proxy: $0.1) }
        proxies = Dictionary(routes, uniquingKeysWith: { first, _ in first })
    }

    /// The endpoints, by name, that go through the proxy.
    public var proxiedEndpoints: Set<String> { Set(proxies.keys) }

    /// The proxy `endpoint` goes through, nil for a direct connection.
    static func proxy(for endpoint: WebhookEndpoint, in configuration: ProxyConfiguration?) -> ProxyConfiguration.Proxy? {
        guard let configuration, let host = endpoint.url.host, !WebhookEndpoint.isLoopback(host),
            let target = HTTPEndpoint(endpoint.url.absoluteString)
        else { return nil }
        return configuration.proxy(for: target)
    }

    func client(for endpoint: WebhookEndpoint) -> HTTPClient {
        proxiedEndpoints.contains(endpoint.name) ? proxied ?? direct : direct
    }

    /// Why a request to `endpoint` failed, in words an operator can act on: AsyncHTTPClient's proxy
    /// errors name neither the proxy nor the target (`HTTPClientError.invalidProxyResponse`).
    func failure(_ error: any Error, to endpoint: WebhookEndpoint) -> String {
        guard let proxy = proxies[endpoint.name], let error = error as? HTTPClientError else { return String(describing: error) }
        let target = "\(endpoint.url.host ?? ""):\(endpoint.url.port ?? 443)"
        switch error {
        case .proxyAuthenticationRequired: return proxy.credentialsRefused(status: "407 Proxy Authentication Required")
        case .invalidProxyResponse:
            return "the proxy \(proxy) refused CONNECT \(target) (it answered other than 200); is the host allowed through it and known to its DNS (or should NO_PROXY list it)?"
        case .httpProxyHandshakeTimeout: return "the proxy \(proxy) did not answer CONNECT \(target) in time"
        default: return String(describing: error)
        }
    }

    public func shutdown() async throws {
        try await direct.shutdown()
        try await proxied?.shutdown()
    }

    private static func client(connectionsPerEndpoint: Int, proxy: ProxyConfiguration.Proxy?) -> HTTPClient {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(connectionsPerEndpoint, 1))
        if let proxy {
            let credentials = proxy.authorization.map { String($0.dropFirst("Basic ".count)) }
            configuration.proxy = .server(host: proxy.host, port: proxy.port, authorization: credentials.map { .basic(credentials: $0) })
        }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
