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
            let refusal = try #require(refused)
            #expect(
                client.failure(refusal, to: remote)
                    == "the proxy 127.0.0.1:\(port) refused the credentials in its URL (407 Proxy Authentication Required); check the user and password in HTTPS_PROXY / HTTP_PROXY")
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

    /// A proxy that will not open the tunnel (squid's 502 for a name its DNS does not know) is named
    /// with the target in the delivery's error, not as AsyncHTTPClient's bare `invalidProxyResponse`.
    @Test func aRefusedTunnelNamesTheProxyAndTheTarget() async throws {
        let proxy = ConnectProxy(refusing: "502 Bad Gateway")
        try await proxy.withRunning { port in
            let remote = try Self.endpoint("remote", "https://hooks.example.test:8443/events")
            let client = WebhookClient(endpoints: [remote], proxy: ProxyConfiguration(https: .init(host: "127.0.0.1", port: port)))
            let refused = await #expect(throws: (any Error).self) {
                _ = try await client.client(for: remote).execute(HTTPClientRequest(url: remote.url.absoluteString), timeout: .seconds(30))
            }
            let refusal = try #require(refused)
            #expect(
                client.failure(refusal, to: remote)
                    == "the proxy 127.0.0.1:\(port) refused CONNECT hooks.example.test:8443 (it answered other than 200); is the host allowed through it and known to its DNS (or should NO_PROXY list it)?"
            )
            #expect(proxy.recorded.refused >= 1 && Set(proxy.recorded.requested) == ["hooks.example.test:8443"])
            try await client.shutdown()
        }
    }
}
