import Testing

@testable import AppStoreBackends

/// What a configured URL becomes: the connection's host and port, the request line's target and
/// the `Host` header, with the host as the URL spells it (never decoded through IDNA).
@Suite struct HTTPEndpointTests {
    @Test func appleSimulatorAndIPv6() throws {
        let apple = try #require(HTTPEndpoint("https://buy.itunes.apple.com/verifyReceipt"))
        #expect(apple.useTLS && apple.host == "buy.itunes.apple.com" && apple.port == 443 && apple.target == "/verifyReceipt")
        #expect(apple.hostHeader == "buy.itunes.apple.com")
        #expect(apple.description == "https://buy.itunes.apple.com/verifyReceipt")

        let simulator = try #require(HTTPEndpoint("http://127.0.0.1:8787/sandbox?x=1"))
        #expect(!simulator.useTLS && simulator.host == "127.0.0.1" && simulator.port == 8787 && simulator.target == "/sandbox?x=1")
        #expect(simulator.hostHeader == "127.0.0.1:8787")
        #expect(simulator.appending(path: "/inApps/v1/history/1").target == "/sandbox/inApps/v1/history/1")

        let loopback6 = try #require(HTTPEndpoint("http://[::1]:8080"))
        #expect(loopback6.host == "::1" && loopback6.port == 8080 && loopback6.target == "/")
        #expect(loopback6.hostHeader == "[::1]:8080")
        #expect(loopback6.description == "http://[::1]:8080/")
    }

    /// A Unicode name is sent as DNS and the `Host` header need it: in its ASCII (punycode) form.
    @Test func aUnicodeHostIsItsASCIIForm() throws {
        let endpoint = try #require(HTTPEndpoint("https://bücher.example/hooks"))
        #expect(endpoint.host == "xn--bcher-kva.example")
        #expect(endpoint.hostHeader == "xn--bcher-kva.example")
    }

    @Test(arguments: ["ftp://example.com/x", "http:///verifyReceipt", "verifyReceipt", "", "https://"])
    func notAnHTTPURLIsRefused(url: String) {
        #expect(HTTPEndpoint(url) == nil)
    }
}
