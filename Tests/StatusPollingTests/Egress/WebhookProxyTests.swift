import AsyncHTTPClient
import Foundation
import Testing

@testable import AppStoreBackends
@testable import StatusPolling

/// The event deliverer reaches an endpoint through the egress proxy as the App Store clients reach
/// Apple (`HTTPS_PROXY`, `NO_PROXY`): through a real `CONNECT` proxy on loopback.
@Suite struct WebhookProxyTests {
    static func endpoint(_ name: String, _ url: String) throws -> WebhookEndpoint {
        try WebhookEndpoint(name: name, url: url, secret: WebhookSecret(WebhookSecret.generate()))
    }

    /// An HTTPS endpoint the rules send through the proxy asks it, with the proxy's credentials,
    /// for a tunnel to the endpoint's own host and port; one `NO_PROXY` lists, and a loopback one,
    /// never go through it.
    @Test func anEndpointGoesThroughTheProxyUnlessNoProxyOrLoopbackSaysOtherwise() async throws {
        // It wants other credentials: a 407 ends the request at once (no tunnel, nothing retried).
        let proxy = ConnectProxy(user: "someone", password: "else")
        try await proxy.withRunning { port in
            let configuration = ProxyConfiguration(
                https: .init(host: "127.0.0.1", port: port, user: "events", password: "s3cret"), http: .init(host: "127.0.0.1", port: port),
                noProxy: try NoProxyList("direct.example.test"))
            let remote = try Self.endpoint("remote", "https://hooks.example.test:8443/events")
            let local = try Self.endpoint("local", "http://127.0.0.1:9/events")
            let endpoints = [remote, try Self.endpoint("direct", "https://direct.example.test/events"), local]
            let direct = WebhookClient(endpoints: endpoints, proxy: nil)
            #expect(direct.proxiedEndpoints == [])
            try await direct.shutdown()
            let client = WebhookClient(endpoints: endpoints, proxy: configuration)
            #expect(client.proxiedEndpoints == ["remote"])

            let refused = await #expect(throws: (any Error).self) {
                _ = try await client.client(for: remote).execute(HTTPClientRequest(url: remote.url.absoluteString), timeout: .seconds(30))
            }
            #expect(refused != nil)
            let asked = proxy.recorded
            #expect(!asked.requested.isEmpty && Set(asked.requested) == ["hooks.example.test:8443"], "\(asked.requested)")
            #expect(Set(asked.authorizations) == ["Basic " + Data("events:s3cret".utf8).base64EncodedString()])
            // Loopback goes direct (nothing listens on port 9: refused there, not at the proxy).
            _ = try? await client.client(for: local).execute(HTTPClientRequest(url: local.url.absoluteString), timeout: .seconds(5))
            // (The pool may still be asking for the remote tunnel: only its target may appear.)
            #expect(Set(proxy.recorded.requested) == ["hooks.example.test:8443"])
            try await client.shutdown()
        }
    }

    /// A delivery's error names the proxy and the target, where AsyncHTTPClient's says neither
    /// (`HTTPClientError.invalidProxyResponse`): the package check sees it through a real proxy;
    /// here each of AsyncHTTPClient's proxy errors, without a network (whose timing decides which
    /// error a refused tunnel ends with on a busy machine: the pool retries until its connect timeout).
    @Test func aProxyFailureNamesTheProxyAndTheTarget() async throws {
        let remote = try Self.endpoint("remote", "https://hooks.example.test:8443/events")
        let local = try Self.endpoint("local", "https://127.0.0.1:8443/events")
        let proxy = ProxyConfiguration(https: .init(host: "proxy.internal", port: 3128, user: "events", password: "s3cret"))
        let client = WebhookClient(endpoints: [remote, local], proxy: proxy)
        #expect(
            client.failure(HTTPClientError.invalidProxyResponse, to: remote)
                == "the proxy proxy.internal:3128 refused CONNECT hooks.example.test:8443 (it answered other than 200); is the host allowed through it and known to its DNS (or should NO_PROXY list it)?"
        )
        #expect(
            client.failure(HTTPClientError.proxyAuthenticationRequired, to: remote)
                == "the proxy proxy.internal:3128 refused the credentials in its URL (407 Proxy Authentication Required); check the user and password in HTTPS_PROXY / HTTP_PROXY"
        )
        #expect(client.failure(HTTPClientError.httpProxyHandshakeTimeout, to: remote) == "the proxy proxy.internal:3128 did not answer CONNECT hooks.example.test:8443 in time")
        #expect(client.failure(HTTPClientError.connectTimeout, to: remote) == "HTTPClientError.connectTimeout")
        // A loopback endpoint goes direct: its errors are not the proxy's.
        #expect(client.failure(HTTPClientError.invalidProxyResponse, to: local) == "HTTPClientError.invalidProxyResponse")
        let anonymous = WebhookClient(endpoints: [remote], proxy: ProxyConfiguration(https: .init(host: "proxy.internal", port: 3128)))
        #expect(
            anonymous.failure(HTTPClientError.proxyAuthenticationRequired, to: remote)
                == "the proxy proxy.internal:3128 requires credentials (407 Proxy Authentication Required); put them in its URL: http://USER:PASSWORD@HOST:PORT"
        )
        try await client.shutdown()
        try await anonymous.shutdown()
    }
}
