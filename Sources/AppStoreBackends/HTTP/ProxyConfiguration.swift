import Foundation

/// Where the App Store client's connections go on a network that reaches the internet only through
/// an HTTP proxy: `https://` endpoints through ``https``, `http://` endpoints through ``http``, and
/// hosts in ``noProxy`` directly. Every proxied connection is an HTTP `CONNECT` tunnel, so TLS,
/// SNI and certificate checks stay end to end with the real host.
public struct ProxyConfiguration: Sendable, Equatable {
    /// One proxy: where to connect, and its credentials as a ready `Proxy-Authorization` value.
    /// Its description is `host:port` only, so logging a proxy never logs its password.
    public struct Proxy: Sendable, Equatable, CustomStringConvertible {
        public var host: String
        public var port: Int
        /// `Basic base64(user:password)`, or nil when the proxy URL carries no user.
        package var authorization: String?

        public init(host: String, port: Int, user: String? = nil, password: String? = nil) {
            self.host = host
            self.port = port
            authorization = user.map { "Basic " + Data("\($0):\(password ?? "")".utf8).base64EncodedString() }
        }

        /// Whether a `Proxy-Authorization` header is sent.
        public var hasCredentials: Bool { authorization != nil }

        public var description: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }

        /// What to do when the proxy wants other credentials than those of its URL (or some, when
        /// it has none): the words of every client that goes through it.
        package func credentialsRefused(status: String) -> String {
            hasCredentials
                ? "the proxy \(self) refused the credentials in its URL (\(status)); check the user and password in HTTPS_PROXY / HTTP_PROXY"
                : "the proxy \(self) requires credentials (\(status)); put them in its URL: http://USER:PASSWORD@HOST:PORT"
        }
    }

    /// For `https://` endpoints (`HTTPS_PROXY`).
    public var https: Proxy?
    /// For `http://` endpoints (`HTTP_PROXY`), such as a simulator.
    public var http: Proxy?
    /// Hosts reached directly (`NO_PROXY`).
    public var noProxy: NoProxyList

    public init(https: Proxy? = nil, http: Proxy? = nil, noProxy: NoProxyList = NoProxyList()) {
        self.https = https
        self.http = http
        self.noProxy = noProxy
    }

    /// The proxy a connection to `endpoint` goes through, or nil for a direct connection.
    public func proxy(for endpoint: HTTPEndpoint) -> Proxy? {
        guard let proxy = endpoint.useTLS ? https : http else { return nil }
        return noProxy.matches(host: endpoint.host, port: endpoint.port) ? nil : proxy
    }

    /// Whether any endpoint goes through a proxy.
    public var isEmpty: Bool { https == nil && http == nil }
}
